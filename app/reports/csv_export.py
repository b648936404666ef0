"""CSV helpers shared by every export."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Sequence

# A spreadsheet runs a cell starting with one of these as a formula; user-controlled text
# (job names, logins, details) must never become one.
_FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")


def safe_cell(value: object) -> object:
    """``value`` unchanged unless it is text a spreadsheet would run as a formula."""
    if isinstance(value, str) and value.startswith(_FORMULA_PREFIXES):
        return "'" + value
    return value


def safe_cells(values: Iterable[object]) -> list[object]:
    return [safe_cell(value) for value in values]


def write_csv(header: Sequence[str], rows: Iterable[Sequence[object]]) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(header)
    for row in rows:
        writer.writerow(safe_cells(row))
    return buffer.getvalue()
