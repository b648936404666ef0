"""squeue's listing read into JobInfo records, and the reader a poller keeps between reads."""

from __future__ import annotations

import codecs
import logging
import sys
from collections.abc import Iterator, Mapping

from app.scheduler.fields import FieldNames
from app.scheduler.slurm.commands import SEP, SQUEUE_FIELDS, SQUEUE_FREE
from app.scheduler.slurm.marks import Marks, ended_records
from app.scheduler.slurm.parsing import (
    expand_output_path,
    parse_duration,
    parse_squeue_exit,
    parse_time,
    parse_tres,
    split_array_id,
    value_or_none,
    whole_seconds,
)
from app.scheduler.states import state_from_slurm
from app.scheduler.types import JobInfo

logger = logging.getLogger(__name__)

_SQUEUE_NAMES = FieldNames([key for key, _ in SQUEUE_FIELDS])


def _groups() -> list[int]:
    """The record's parts between marks: a free field alone (0), or a run of fixed fields
    (their count), which SEP separates."""
    groups: list[int] = []
    for key, _ in SQUEUE_FIELDS:
        if key in SQUEUE_FREE:
            groups.append(0)
        elif groups and groups[-1] > 0:
            groups[-1] += 1
        else:
            groups.append(1)
    return groups


_GROUPS = _groups()


def parse_squeue(text: str, marks: Marks) -> list[JobInfo]:
    """Parse the output of ``squeue_argv()`` run with ``squeue_format`` of ``marks``."""
    return SqueueReader(marks).parse(text)


def _cells(record: str, marks: Marks) -> list[str] | None:
    parts = record[: -len(marks.end)].split(marks.field)
    if len(parts) != len(_GROUPS):
        return None
    cells: list[str] = []
    for part, fixed in zip(parts, _GROUPS, strict=True):
        if not fixed:
            cells.append(part)
            continue
        values = part.split(SEP)
        if len(values) != fixed:
            return None
        cells.extend(values)
    # One string per value: a large queue repeats a few (states, users, "N/A") 10^5 times.
    return [sys.intern(cell.strip()) for cell in cells]


def _squeue_record(cells: list[str]) -> JobInfo:
    """One record; its raw fields kept compact (app/scheduler/fields.py), since a poller
    keeps the records of a whole queue from one read to the next."""
    row = dict(zip(_SQUEUE_NAMES.positions, cells, strict=True))
    return _squeue_job(row, _SQUEUE_NAMES.record(cells))


# A record longer than this is left out (and reported) instead of held: the listing flows
# through the reader as it arrives, so one job's free text must not make it keep everything.
RECORD_CAP = 4 * 1024 * 1024


class SqueueReader:
    """``parse_squeue`` for a poller reading the same queue every few seconds. A record is
    a function of its text alone, and most records of a large queue (jobs waiting
    unchanged) are as at the last read: they are reused, only new or changed ones parsed.

    Records are remembered by the hash of their text and checked against its job id, not
    by the text itself: 100,000 kept lines would cost 26 MB. A changed record of the same
    job passes for the old one only if the two share a 64-bit hash, which Python seeds
    afresh in every process. The marks stay the same from one read to the next, so an
    unchanged record's text does too.
    """

    def __init__(self, marks: Marks) -> None:
        self.marks = marks
        self._last: dict[int, JobInfo] = {}

    def parse(self, text: str) -> list[JobInfo]:
        reading = self.reading()
        reading.take(text)
        return reading.finish()

    def reading(self) -> SqueueReading:
        """A read fed piece by piece (``SqueueReading``); the records it reads become the
        ones the next read reuses when it finishes."""
        return SqueueReading(self, self._last)

    def remember(self, read: dict[int, JobInfo]) -> None:
        """The records the next read reuses: a finished read's."""
        self._last = read


class SqueueReading:
    """One read of the queue, fed squeue's answer as it arrives. Each record is read as
    soon as its end mark has come: a queue of 100,000 jobs is read while squeue still
    prints it (0.35 s of its 1.1 s), and its 26 MB of text are never held whole. A read
    that is not finished (the command failed midway) leaves the reader as it was."""

    def __init__(self, reader: SqueueReader, last: dict[int, JobInfo]) -> None:
        self._reader = reader
        self._last = last
        self._end = reader.marks.end
        self._decoder = codecs.getincrementaldecoder("utf-8")("replace")
        self._tail = ""
        self._skipping = False
        self._read: dict[int, JobInfo] = {}
        self._records: list[JobInfo] = []
        self._unreadable: list[str] = []

    def feed(self, data: bytes) -> None:
        """The next piece of squeue's output, cut anywhere."""
        self.take(self._decoder.decode(data))

    def take(self, text: str) -> None:
        """The next piece of the output, decoded."""
        text = self._tail + text
        cut = text.rfind(self._end)
        if cut < 0:
            self._tail = self._held(text)
            return
        cut += len(self._end)
        records = ended_records(text[:cut], self._end, self._unreadable)
        if self._skipping:
            next(records)  # the end of a record too long to keep
            self._skipping = False
        self._read_records(records)
        self._tail = self._held(text[cut:])

    def finish(self) -> list[JobInfo]:
        """The records read, in squeue's order; what follows the last end is reported."""
        rest = (self._tail + self._decoder.decode(b"", final=True)).strip()
        if rest and not self._skipping:
            self._unreadable.append(rest)
        self._reader.remember(self._read)
        _report(self._unreadable)
        return self._records

    def _read_records(self, records: Iterator[str]) -> None:
        last, read, marks = self._last, self._read, self._reader.marks
        for record in records:
            key = hash(record)
            info = last.get(key) or read.get(key)
            if info is None or not record.startswith(info.job_id + SEP):
                cells = _cells(record, marks)
                if cells is None:
                    self._unreadable.append(record)
                    continue
                info = _squeue_record(cells)
            read[key] = info
            self._records.append(info)

    def _held(self, text: str) -> str:
        """``text``, an unfinished record, unless it is longer than any record kept: then
        only what may be the start of its end mark."""
        if len(text) <= RECORD_CAP:
            return text
        if not self._skipping:
            self._unreadable.append(text[:200])
            self._skipping = True
        return text[len(text) - len(self._end) + 1 :]


def _report(unreadable: list[str]) -> None:
    if unreadable:
        logger.warning(
            "squeue: %d record(s) left out, not in the format asked for; the first: %r",
            len(unreadable),
            unreadable[0][:200],
        )


def _squeue_job(row: Mapping[str, str], native: Mapping[str, str]) -> JobInfo:
    job_id = row["job_id"]
    array_job_id, array_task_id = split_array_id(job_id)
    reason = value_or_none(row["reason"])
    state = state_from_slurm(row["state"], reason)
    exit_code, signal = parse_squeue_exit(row["exit_status"]) if state.is_terminal else (None, None)
    raw_job_id = value_or_none(row["raw_job_id"])
    names = {"job_id": job_id, "raw": raw_job_id or "", "name": row["name"], "user": row["user"]}
    stdout_path = _expand(row["stdout"], names, array_job_id, array_task_id)
    return JobInfo(
        job_id=job_id,
        raw_job_id=raw_job_id,
        array_job_id=array_job_id,
        array_task_id=array_task_id,
        state=state,
        native_state=row["state"],
        reason=reason,
        exit_code=exit_code,
        signal=signal,
        submit_time=parse_time(row["submit_time"]),
        start_time=parse_time(row["start_time"]),
        end_time=parse_time(row["end_time"]),
        time_limit=parse_duration(row["time_limit"]),
        elapsed_seconds=whole_seconds(parse_duration(row["time_used"])),
        alloc=parse_tres(row["tres_alloc"]),
        nodes=value_or_none(row["nodes"]),
        user=row["user"],
        account=value_or_none(row["account"]),
        partition=value_or_none(row["partition"]),
        name=row["name"],
        comment=value_or_none(row["comment"]),
        work_dir=value_or_none(row["work_dir"]),
        stdout_path=stdout_path,
        # Without --error, stderr goes to the output file: 22.05 prints that path again,
        # 23.02 and later print "(null)".
        stderr_path=_stderr_path(row, names, array_job_id, array_task_id) or stdout_path,
        native=native,
    )


def _stderr_path(
    row: Mapping[str, str], names: Mapping[str, str], array_job_id: str | None, task: str | None
) -> str | None:
    # Most jobs send both streams to one file: one string for the two, not two equal ones.
    if row["stderr"] == row["stdout"]:
        return None
    return _expand(row["stderr"], names, array_job_id, task)


def _expand(
    pattern: str, names: Mapping[str, str], array_job_id: str | None, array_task_id: str | None
) -> str | None:
    return expand_output_path(
        pattern,
        job_id=names["job_id"],
        name=names["name"],
        user=names["user"],
        array_job_id=array_job_id,
        array_task_id=array_task_id,
        raw_job_id=names["raw"] or None,
    )
