"""Path and query parameter types shared by the routes (defined once in ``app.params``)."""

from __future__ import annotations

from app.params import MAX_ID, PathId

__all__ = ["MAX_ID", "PathId"]
