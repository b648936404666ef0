"""Listings whose free text can pass neither for a field nor for a record (ADR 0035).

squeue and sacct print every field as it is. A job's name, working directory or comment
may hold the field separator or a line feed, so in a plain listing any user could split
their record in two, stopping the reading of the whole queue, or print whole records of
their making after a line feed, another user's job id included. Every separator next to
free text, and the end of each record, therefore carries a mark: random characters drawn
when the reading starts, which no user knows when naming a job. Where the mark reaches
the command only through its environment (squeue), it never shows in a process list.
"""

from __future__ import annotations

import re
import secrets
import string
from collections.abc import Iterator

from app.scheduler.slurm.commands import SEP

MARK_LENGTH = 12
_ALPHABET = string.ascii_letters + string.digits
# Ends a record; the field separator is SEP, so a field mark never passes for an end.
END = "\x1e"
_LINE = re.compile(r"[^\r\n]+")


class Marks:
    """The marks of one series of readings: ``field`` separates free text from its
    neighbours, ``end`` closes a record."""

    __slots__ = ("end", "field")

    def __init__(self, mark: str) -> None:
        if len(mark) < MARK_LENGTH or not mark.isalnum():
            raise ValueError("a mark is at least 12 letters or digits")
        self.field = SEP + mark
        self.end = END + mark

    @classmethod
    def new(cls) -> Marks:
        return cls("".join(secrets.choice(_ALPHABET) for _ in range(MARK_LENGTH)))


def lines(text: str) -> Iterator[str]:
    """A listing's non-blank lines, one at a time: a queue of 100,000 jobs split at once
    would hold 26 MB more at a poll cycle's peak. Only CR and LF end a line; splitlines
    would also split at the ASCII separators, which a job's name may hold."""
    for found in _LINE.finditer(text):
        line = found.group()
        if line.strip():
            yield line


def ended_records(text: str, end: str, unfinished: list[str]) -> Iterator[str]:
    """Each record of ``text``, its ``end`` included (no copy of a whole line): lines are
    joined (by a line feed, the one free text held) until one ends with it. Text after the
    last end is unfinished."""
    pending: list[str] = []
    for line in lines(text):
        if not line.endswith(end):
            pending.append(line)
            continue
        if pending:
            pending.append(line)
            line = "\n".join(pending)
            pending = []
        yield line
    if pending:
        unfinished.append("\n".join(pending))


def counted_records(text: str, delimiter: str, width: int, unfinished: list[str]) -> Iterator[str]:
    """Each record of a listing printed with ``delimiter`` after each of its ``width``
    fields (sacct --parsable), without the last one: lines are joined until they hold
    ``width`` delimiters. Text after the last whole record is unfinished."""
    pending: list[str] = []
    held = 0
    for line in lines(text):
        held += line.count(delimiter)
        pending.append(line)
        if held < width:
            continue
        record = pending[0] if len(pending) == 1 else "\n".join(pending)
        pending, held = [], 0
        if not record.endswith(delimiter) or record.count(delimiter) != width:
            unfinished.append(record)
            continue
        yield record[: -len(delimiter)]
    if pending:
        unfinished.append("\n".join(pending))
