"""Every model, so that the metadata is complete: Alembic compares it with the database, the
tests empty its tables, and a foreign key finds the table it refers to in any process, whatever
models that process happened to import (app/db.py loads this before any session is made).

Each module of this package is loaded, so a new model cannot be left out.
"""

from __future__ import annotations

import importlib
import pkgutil
from pathlib import Path

from app.models.base import Base

_HERE = Path(__file__).resolve().parent
_NOT_MODELS = frozenset({"base", "catalogue"})

MODEL_MODULES = tuple(
    importlib.import_module(f"app.models.{found.name}")
    for found in pkgutil.iter_modules([str(_HERE)])
    if found.name not in _NOT_MODELS
)
metadata = Base.metadata
