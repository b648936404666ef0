"""The poller's readings of ``bjobs_argv`` and ``bhist_argv``: the wide listing vouches for
the long form.

bjobs -l prints a job's name and folder as they are, and both are the user's to choose: a
name like ``x>, Job <28`` reads as another job's id, and a folder whose name holds line
feeds can hold a whole record of its owner's making (``Job <26>, …, User <bob>, Status
<DONE>``). The wide listing (bjobs -w), printed first by the same command, has one line a
job whose first four columns LSF writes itself: id, user, status, queue. A long record is
read only if its id is listed there and no other record claims it; its user and queue are
the listing's. A listed job whose record is missing or claimed twice is known by the
listing alone, so forging another job's record can hide its details, never change them.
bhist's wide listing (id, user) vouches the same way for histories.
"""

from __future__ import annotations

import logging
import re
from collections import Counter
from dataclasses import dataclass, replace
from datetime import datetime

from app.scheduler.lsf import long_form
from app.scheduler.lsf.commands import LISTING_BREAK
from app.scheduler.lsf.parsing import JOB_ID, job_info
from app.scheduler.lsf.states import state_from_lsf
from app.scheduler.types import JobInfo

logger = logging.getLogger(__name__)

_FIRST_ID = re.compile(r"Job <([^>]*)>")


@dataclass(frozen=True, slots=True)
class Listed:
    """A job as the wide listing shows it."""

    user: str
    status: str
    queue: str


def wide_listing(text: str) -> dict[str, Listed]:
    """bjobs -w's lines by job id; its header and anything not starting with an id skipped."""
    return {row[0]: Listed(*row[1:4]) for row in _rows(text, 4)}


def _rows(text: str, columns: int) -> list[list[str]]:
    """The first ``columns`` columns of each line of a wide listing that starts with a job
    id (the one after them, a job's name, may hold blanks)."""
    rows = []
    for line in text.split("\n"):
        row = line.split(None, columns)[:columns]
        if len(row) == columns and JOB_ID.fullmatch(row[0]):
            rows.append(row)
    return rows


class BjobsReader:
    """Reads ``bjobs_argv``'s output every few seconds. A job's record is a function of its
    text alone, but for a running job's elapsed time (counted up to now), and most records
    of a large queue (jobs waiting unchanged) are as at the last read: those are reused,
    only new, changed or running ones parsed."""

    def __init__(self) -> None:
        self._last: dict[str, JobInfo] = {}

    def parse(self, text: str, now: datetime) -> list[JobInfo]:
        wide, _, long = text.partition(LISTING_BREAK)
        listed = wide_listing(wide)
        chunks = [(_first_id(chunk), chunk) for chunk in long_form.chunks(long)]
        claims = Counter(job_id for job_id, _ in chunks)
        last = self._last
        kept: dict[str, JobInfo] = {}
        jobs: list[JobInfo] = []
        for job_id, chunk in chunks:
            if job_id not in listed or claims[job_id] > 1:
                continue
            info = last.get(chunk)
            if info is None:
                info = _as_listed(job_info(long_form.record(chunk, now), now), listed[job_id])
            if info.start_time is None or info.end_time is not None:
                kept[chunk] = info
            jobs.append(info)
        self._last = kept
        read = {info.job_id for info in jobs}
        jobs += [_listed_only(job_id, job) for job_id, job in listed.items() if job_id not in read]
        _report("bjobs", claims, set(listed))
        return jobs


def parse_history(text: str, now: datetime) -> list[JobInfo]:
    """``bhist_argv``'s output: the long records its wide listing vouches for, each with the
    listing's user. A job whose record is claimed twice is left out (the history has no
    status to know it by); the poller asks again at its next cycle."""
    wide, _, long = text.partition(LISTING_BREAK)
    users = dict(_rows(wide, 2))
    chunks = [(_first_id(chunk), chunk) for chunk in long_form.chunks(long)]
    claims = Counter(job_id for job_id, _ in chunks)
    jobs = []
    for job_id, chunk in chunks:
        if job_id in users and claims[job_id] == 1:
            info = job_info(long_form.record(chunk, now), now)
            jobs.append(info if info.user == users[job_id] else replace(info, user=users[job_id]))
    _report("bhist", claims, set(users))
    return jobs


def _first_id(chunk: str) -> str:
    match = _FIRST_ID.match(chunk)
    return match[1] if match else ""


def _as_listed(info: JobInfo, job: Listed) -> JobInfo:
    if info.user == job.user and info.partition == job.queue:
        return info
    return replace(info, user=job.user, partition=job.queue)


def _listed_only(job_id: str, job: Listed) -> JobInfo:
    match = JOB_ID.fullmatch(job_id)
    index = match["index"] if match else None
    return JobInfo(
        job_id=job_id,
        state=state_from_lsf(job.status),
        native_state=job.status,
        raw_job_id=job_id,
        array_job_id=match["job"] if match and index is not None else None,
        array_task_id=index,
        user=job.user,
        partition=job.queue,
    )


def _report(command: str, claims: Counter[str], listed: set[str]) -> None:
    doubled = sorted(job_id for job_id, count in claims.items() if count > 1)
    unlisted = sorted(job_id for job_id in claims if job_id not in listed)
    if doubled or unlisted:
        logger.warning(
            "%s: records claimed twice %s and records of jobs not listed %s left out",
            command,
            doubled[:10],
            unlisted[:10],
        )
