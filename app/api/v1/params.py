"""Path and query parameter types shared by the routes."""

from __future__ import annotations

from typing import Annotated

from fastapi import Path, Query

# Ids are database integers; larger numbers are refused as invalid instead of overflowing.
MAX_ID = 2**31 - 1

PathId = Annotated[int, Path(ge=1, le=MAX_ID)]
QueryId = Annotated[int | None, Query(ge=1, le=MAX_ID)]
