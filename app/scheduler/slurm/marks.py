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

import secrets
import string
from collections.abc import Iterator

from app.scheduler.slurm.commands import SEP

MARK_LENGTH = 12
_ALPHABET = string.ascii_letters + string.digits
# Ends a record; the field separator is SEP, so a field mark never passes for an end.
END = "\x1e"


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


def ended_records(text: str, end: str, unfinished: list[str]) -> Iterator[str]:
    """Each record of ``text``, its ``end`` included (one slice, no other copy), whatever
    line feeds its free text holds. Text after the last end is unfinished."""
    start, size = 0, len(end)
    while (found := text.find(end, start)) >= 0:
        # What precedes a record is the line end after the one before it.
        yield text[start : found + size].lstrip("\r\n")
        start = found + size
    rest = text[start:].strip()
    if rest:
        unfinished.append(rest)


def counted_records(text: str, delimiter: str, width: int, unfinished: list[str]) -> Iterator[str]:
    """Each record of a listing printed with ``delimiter`` after each of its ``width``
    fields (sacct --parsable), without the last one, whatever line feeds its free text
    holds. Text after the last whole record is unfinished."""
    start, size = 0, len(delimiter)
    while True:
        end = start
        for _field in range(width):
            found = text.find(delimiter, end)
            if found < 0:
                rest = text[start:].strip()
                if rest:
                    unfinished.append(rest)
                return
            end = found + size
        # What precedes a record is the line end after the one before it.
        yield text[start : end - size].lstrip("\r\n")
        start = end
