"""The poller's reading of ``qstat -f -F json``: as it arrives, one job's object at a time.

With ``-x`` the listing holds every job of the server's history (two weeks by default), at
about 1.8 KB each: read whole, 37,000 jobs passed the transport's 64 MiB cap on what a
command prints, and the poller failed every cycle from then on. Read as it arrives, only
the object being read is held, besides the records themselves.

The answer is one JSON object whose ``Jobs`` member maps each job id to its object; every
other member (``timestamp``, ``pbs_version``, ``pbs_server``) is small and skipped. Each
value is read by the standard decoder (``raw_decode``); one that is not whole yet waits for
more of the answer.
"""

from __future__ import annotations

import codecs
import json
import re
from collections.abc import Callable
from typing import Any

from app.scheduler.pbs.parsing import parse_job
from app.scheduler.types import JobInfo

# No job's object comes near this (its environment, ``-V``, is bounded by the kernel's
# 2 MiB for arguments and environment); more unread text than this is no qstat answer.
OBJECT_CAP = 16 * 1024 * 1024
_BLANKS = re.compile(r"[ \t\n\r]*")
_DECODER = json.JSONDecoder()


class QstatAnswerError(ValueError):
    """The answer is not the JSON qstat prints."""


class QstatReader:
    """``parse_jobs`` for a poller reading the same queue every few seconds. A record is a
    function of its job's JSON alone, and most of a large queue (jobs waiting unchanged) is
    as at the last read: a job whose JSON equals last time's keeps its record."""

    def __init__(self) -> None:
        self._last: dict[str, JobInfo] = {}

    def parse(self, text: str) -> list[JobInfo]:
        reading = self.reading()
        reading.take(text)
        return reading.finish()

    def reading(self) -> QstatReading:
        """A read fed piece by piece; its records are the ones the next read reuses once
        it finishes (an unfinished one leaves the reader as it was)."""
        return QstatReading(self, self._last)

    def remember(self, read: dict[str, JobInfo]) -> None:
        """The records the next read reuses: a finished read's."""
        self._last = read


class QstatReading:
    """One answer, fed in pieces cut anywhere."""

    def __init__(self, reader: QstatReader, last: dict[str, JobInfo]) -> None:
        self._reader = reader
        self._last = last
        self._read: dict[str, JobInfo] = {}
        self._decoder = codecs.getincrementaldecoder("utf-8")("replace")
        self._objects = JobObjects(self._job)
        # Whether only blanks came: qstat that failed prints nothing else.
        self.blank = True

    def feed(self, data: bytes) -> None:
        """The next piece of qstat's output, cut anywhere."""
        self.blank = self.blank and not data.strip()
        self.take(self._decoder.decode(data))

    def take(self, text: str) -> None:
        """The next piece of the output, decoded."""
        self._objects.take(text)

    def finish(self) -> list[JobInfo]:
        """Every job read, in PBS's order; QstatAnswerError if the answer was cut short."""
        self._objects.take(self._decoder.decode(b"", final=True))
        self._objects.finish()
        self._reader.remember(self._read)
        return list(self._read.values())

    def _job(self, job_id: str, record: dict[str, Any]) -> None:
        info = self._last.get(job_id)
        if info is None or info.native != record:
            info = parse_job(job_id, record)
        self._read[job_id] = info


class JobObjects:
    """Walks the answer's JSON as it comes, handing each member of ``Jobs`` to ``take``.

    ``_step`` says where the walk is: before the answer, between the answer's members or
    ``Jobs``' ones, at a member's value, or past the end; each step returns whether it
    moved, and waits (False) for more text when what it needs has not come whole.
    """

    def __init__(self, take: Callable[[str, dict[str, Any]], None]) -> None:
        self._take = take
        self._text = ""
        self._at = 0
        self._final = False
        self._key = ""
        self._step: Callable[[], bool] = self._answer

    def take(self, more: str) -> None:
        self._text = self._text[self._at :] + more
        self._at = 0
        while self._step():
            pass
        if len(self._text) - self._at > OBJECT_CAP:
            raise QstatAnswerError(f"a part of qstat's answer exceeded {OBJECT_CAP} bytes")

    def finish(self) -> None:
        self._final = True
        self.take("")
        if self._step not in (self._answer, self._end) or self._text[self._at :].strip():
            raise QstatAnswerError("qstat's answer ended before its JSON did")

    def _peek(self) -> str:
        """The next character past blanks ("" when none has come yet)."""
        self._at = _BLANKS.match(self._text, self._at).end()  # type: ignore[union-attr]
        return self._text[self._at : self._at + 1]

    def _value(self) -> tuple[bool, Any]:
        """The value at hand, if it has come whole: a number at the very end of the text
        so far may go on in the next piece."""
        if not self._peek():
            return False, None
        try:
            value, end = _DECODER.raw_decode(self._text, self._at)
        except json.JSONDecodeError:
            return False, None
        if end == len(self._text) and not self._final:
            return False, None
        self._at = end
        return True, value

    def _answer(self) -> bool:
        return self._open(self._member, "qstat's answer is not a JSON object")

    def _member(self) -> bool:
        return self._name(self._member_value, self._finished)

    def _member_value(self) -> bool:
        if self._key == "Jobs":
            return self._open(self._job, "qstat's Jobs is not a JSON object")
        whole, _ = self._value()
        if whole:
            self._step = self._member
        return whole

    def _job(self) -> bool:
        return self._name(self._job_value, self._member)

    def _job_value(self) -> bool:
        whole, record = self._value()
        if not whole:
            return False
        if not isinstance(record, dict):
            raise QstatAnswerError(f"qstat's job {self._key!r} is not a JSON object")
        self._take(self._key, record)
        self._step = self._job
        return True

    def _open(self, then: Callable[[], bool], refusal: str) -> bool:
        char = self._peek()
        if not char:
            return False
        if char != "{":
            raise QstatAnswerError(refusal)
        self._at += 1
        self._step = then
        return True

    def _name(self, then: Callable[[], bool], closed: Callable[[], bool]) -> bool:
        """In an object: a comma, its end (then ``closed``), or a member's name and colon."""
        char = self._peek()
        if char in ("", ","):
            self._at += len(char)
            return bool(char)
        if char == "}":
            self._at += 1
            self._step = closed
            return True
        start = self._at
        whole, name = self._value()
        if not whole:
            return False
        colon = self._peek()
        if not colon:
            self._at = start  # the colon has not come yet: read the name again then
            return False
        if not isinstance(name, str) or colon != ":":
            raise QstatAnswerError("qstat's answer is not the JSON it prints")
        self._at += 1
        self._key = name
        self._step = then
        return True

    def _finished(self) -> bool:
        self._step = self._end
        return False

    def _end(self) -> bool:
        return False
