"""Slurm array task-set expressions such as ``[3-10]``, ``[1,4-9:2]`` or ``[0-9999%5]``."""

from __future__ import annotations

import re

_PIECE = re.compile(r"(\d+)(?:-(\d+)(?::(\d+))?)?")


def task_ranges(expression: str) -> list[tuple[int, int, int]]:
    """(first, last, step) ranges of a pending array record's task set; [] if unreadable."""
    body = expression.strip().strip("[]").split("%", 1)[0]
    ranges: list[tuple[int, int, int]] = []
    for piece in body.split(","):
        match = _PIECE.fullmatch(piece.strip())
        if match is None:
            return []
        first = int(match[1])
        last = int(match[2]) if match[2] else first
        ranges.append((first, last, int(match[3] or 1)))
    return ranges


def contains_task(ranges: list[tuple[int, int, int]], task_id: int) -> bool:
    """True when ``task_id`` is in one of ``ranges`` (checked without expanding them)."""
    return any(
        first <= task_id <= last and (task_id - first) % step == 0 for first, last, step in ranges
    )
