"""The job list over slurmrestd, asking slurmctld first whether any job changed.

Given a time (``update_time``), slurmctld answers a listing with every job it holds, or with
nothing at all when no job has changed since (its SLURM_NO_CHANGE_IN_DATA; slurmrestd then
sends no jobs, a warning and a ``last_update`` of 0). It never sends only the jobs that
changed: a change anywhere (a submission, a state, a job purged from its memory) brings the
whole list again. So a quiet cluster costs one small answer a cycle instead of a full listing
and its parsing, and a busy one what it did; ADR 0036 has the measurements.

The time asked with is slurmctld's own: the kept listing's ``last_update`` where the API takes
an epoch, else ``now-N`` with N seconds reaching back before the kept listing's request was
sent; an answer that took longer than ``SLACK_SECONDS`` cannot vouch for that and is read
again in full. API v0.0.38 (22.05) takes neither, so every read there is full.
"""

from __future__ import annotations

import math
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from app.scheduler.slurm.rest_parsing import job_from_rest
from app.scheduler.slurm.rest_versions import number_value, update_time_form
from app.scheduler.types import JobInfo

Fetch = Callable[[Mapping[str, str] | None], Awaitable[Mapping[str, Any]]]

# A listing kept longer than this is read again in full, whatever slurmctld says about it.
FULL_READ_SECONDS = 300.0
# How long a relative ("now-N") question may take and still vouch for the kept listing.
SLACK_SECONDS = 2.0


class RestQueue:
    """The last full listing, and the question that asks slurmctld whether it still holds."""

    def __init__(
        self,
        *,
        full_read_seconds: float = FULL_READ_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._full_read_seconds = full_read_seconds
        self._clock = clock
        self._jobs: list[JobInfo] | None = None
        self._last_update: int | None = None
        self._sent_at = 0.0
        # How many answers said "nothing changed", for benchmarks and logs.
        self.unchanged_answers = 0

    async def read(self, fetch: Fetch, version: str) -> list[JobInfo]:
        """Every job slurmctld holds: ``fetch`` gets the query (None for a full listing)."""
        sent_at = self._clock()
        asked = self._question(version, sent_at)
        payload = await fetch(asked)
        if asked is not None and _unchanged(payload):
            relative = asked["update_time"].startswith("now")
            if not relative or self._clock() - sent_at <= SLACK_SECONDS:
                self.unchanged_answers += 1
                return list(self._jobs or [])
            sent_at = self._clock()
            payload = await fetch(None)
        self._jobs = [job_from_rest(job, version) for job in payload.get("jobs") or []]
        stamp = number_value(payload.get("last_update"))
        self._last_update = stamp if stamp is not None and stamp > 0 else None
        self._sent_at = sent_at
        return list(self._jobs)

    def _question(self, version: str, now: float) -> dict[str, str] | None:
        """``update_time`` for the kept listing, or None when the next read must be full."""
        if self._jobs is None or now - self._sent_at >= self._full_read_seconds:
            return None
        form = update_time_form(version)
        if form == "epoch" and self._last_update is not None:
            return {"update_time": str(self._last_update)}
        if form == "relative":
            # slurmctld's "now" falls at most SLACK_SECONDS after this request leaves (or the
            # answer is not trusted): reaching back that far, the time since the kept
            # listing's request left and one second more lands before that listing was packed.
            back = math.ceil(now - self._sent_at + SLACK_SECONDS) + 1
            return {"update_time": f"now-{back}"}
        return None


def _unchanged(payload: Mapping[str, Any]) -> bool:
    """Whether an answer asked with ``update_time`` says no job changed since."""
    return not payload.get("jobs") and not number_value(payload.get("last_update"))
