"""Printing API answers for people (aligned columns) or for programs (``--json``)."""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping, Sequence
from typing import Any, TextIO


def print_json(value: Any, stream: TextIO | None = None) -> None:
    print(json.dumps(value, indent=2, sort_keys=True), file=stream or sys.stdout)


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    return str(value)


def print_table(
    rows: Sequence[Mapping[str, Any]], columns: Sequence[str], stream: TextIO | None = None
) -> None:
    out = stream or sys.stdout
    cells = [[_cell(row.get(column)) for column in columns] for row in rows]
    widths = [
        max([len(column), *(len(line[index]) for line in cells)])
        for index, column in enumerate(columns)
    ]
    header = "  ".join(
        column.upper().ljust(width) for column, width in zip(columns, widths, strict=True)
    )
    print(header.rstrip(), file=out)
    for line in cells:
        print(
            "  ".join(cell.ljust(width) for cell, width in zip(line, widths, strict=True)).rstrip(),
            file=out,
        )


def print_fields(
    record: Mapping[str, Any], fields: Sequence[str], stream: TextIO | None = None
) -> None:
    out = stream or sys.stdout
    width = max(len(name) for name in fields)
    for name in fields:
        print(f"{name.ljust(width)}  {_cell(record.get(name))}", file=out)
