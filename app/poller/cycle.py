"""One poll cycle for one cluster: read, ask Slurm, decide, write.

The database is touched twice, briefly: a read-only session for the tracked rows (closed
before Slurm is called) and one transaction for the outcome. In between: one queue call,
one batched accounting call for jobs that left the queue (one per
``ACCOUNTING_BATCH`` of them, when more left at once), and, only when a submission went
unconfirmed, one accounting search by time for its UUID. The runner asks
for extra work on some cycles (``CycleWork``): one partitions call, one nodes call, one
reservations call (maintenance windows), or one usage ingestion (one accounting call and one
allocation-limits call, their own short transactions). ADR 0002 gives the whole budget; ADR
0021 the allocation call.
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.models.base import utc_now
from app.poller import outside_store, store
from app.poller.maintenance import record_maintenance
from app.poller.outside import outside_jobs
from app.poller.reconcile import (
    Grace,
    Snapshot,
    TrackedJob,
    Transition,
    accounting_ids,
    reconcile,
    stale_submissions,
)
from app.poller.store import Reports
from app.reports import allocation_alerts
from app.reports.ingest import ingest_cycle
from app.scheduler.base import SchedulerAdapter
from app.scheduler.errors import SchedulerError
from app.scheduler.nodes import NodesReport
from app.scheduler.types import JobInfo, PartitionInfo

logger = logging.getLogger(__name__)
# Slurm's submit time and the portal's row time come from different clocks.
CLOCK_SKEW_MARGIN = timedelta(minutes=5)
# Job ids per accounting call. A command reaches the login node as one argument of its
# shell, which Linux caps at 128 KiB: 20,000 ids failed there with "Argument list too long",
# and a mass cancel of that many would have failed every cycle after it. 2,000 ids stay under
# 64 KiB up to 32 characters each (PBS's carry the server's name); sacct answers them in 0.2 s.
ACCOUNTING_BATCH = 2_000


@dataclass(frozen=True, slots=True)
class CycleWork:
    """What this cycle does besides syncing job states."""

    partitions: bool = False
    nodes: bool = False
    usage: bool = False
    reservations: bool = False
    # The running interactive sessions' idle check (app/poller/idle.py), after the cycle.
    idle: bool = False


NO_EXTRA_WORK = CycleWork()


@dataclass(frozen=True, slots=True)
class CycleResult:
    cluster: str
    is_ok: bool
    calls: int
    seconds: float
    tracked: int
    transitions: int
    consecutive_failures: int
    error: str | None = None


class _Calls:
    def __init__(self) -> None:
        self.count = 0


async def read_rows_and_queue(
    sessionmaker: async_sessionmaker[AsyncSession],
    cluster: str,
    adapter: SchedulerAdapter,
    calls: _Calls,
) -> tuple[list[TrackedJob], list[JobInfo] | SchedulerError]:
    """The tracked rows and the queue snapshot, read at the same time: with 100,000 jobs
    each takes about a second (squeue on the cluster, the rows from the database). A row
    attached meanwhile to a job the snapshot missed only waits for a later cycle."""
    calls.count += 1
    loading = asyncio.ensure_future(store.load_tracked_jobs(sessionmaker, cluster))
    queue: list[JobInfo] | SchedulerError
    try:
        queue = await adapter.queue()
    except SchedulerError as error:
        queue = error
    except BaseException:
        loading.cancel()
        raise
    return await loading, queue


async def fetch(
    adapter: SchedulerAdapter,
    jobs: list[TrackedJob],
    queue: Snapshot,
    now: datetime,
    grace: Grace,
    calls: _Calls,
) -> list[JobInfo]:
    """The accounting records this cycle needs beside the queue snapshot."""
    records: list[JobInfo] = []
    wanted = accounting_ids(jobs, queue)
    for start in range(0, len(wanted), ACCOUNTING_BATCH):
        calls.count += 1
        records += await adapter.accounting(job_ids=wanted[start : start + ACCOUNTING_BATCH])
    unconfirmed = stale_submissions(jobs, queue, now, grace)
    if unconfirmed:
        since = min(job.created_at for job in unconfirmed) - CLOCK_SKEW_MARGIN
        calls.count += 1
        records += await adapter.accounting(since=since)
    return records


async def _extra_work(
    sessionmaker: async_sessionmaker[AsyncSession],
    cluster: str,
    adapter: SchedulerAdapter,
    work: CycleWork,
    calls: _Calls,
    moment: datetime,
) -> Reports:
    """The partitions and the nodes, when asked for, after ingesting usage and reading
    maintenance reservations when those are due.

    With the usage comes the scheduler's allocation limits (one more call), so a project's
    burn-down and its 80 % and 95 % notifications follow the use just ingested.
    """
    if work.usage:
        calls.count += 2
        await ingest_cycle(sessionmaker, adapter, cluster)
        limits = await adapter.account_limits()
        await allocation_alerts.refresh(sessionmaker, cluster, limits, utc_now().date())
    if work.reservations:
        calls.count += 1
        reservations = await adapter.reservations()
        await record_maintenance(sessionmaker, cluster, reservations, moment)
    partitions: list[PartitionInfo] | None = None
    if work.partitions:
        calls.count += 1
        partitions = list(await adapter.partitions())
    nodes: NodesReport | None = None
    if work.nodes:
        calls.count += 1
        nodes = await adapter.nodes()
    return Reports(partitions, nodes)


async def _settle(
    sessionmaker: async_sessionmaker[AsyncSession],
    cluster: str,
    adapter: SchedulerAdapter,
    read: tuple[list[TrackedJob], list[JobInfo]],
    moment: datetime,
    rules: Grace,
    calls: _Calls,
) -> list[Transition]:
    """What the rows and the queue read say: accounting where needed, the transitions
    written, the jobs submitted outside the portal recorded."""
    jobs, queue = read
    indexed = Snapshot.of(queue)
    records = await fetch(adapter, jobs, indexed, moment, rules, calls)
    transitions = reconcile(jobs, indexed, records, moment, rules)
    await store.apply_transitions(sessionmaker, transitions)
    directory = await outside_store.load_directory(sessionmaker, cluster)
    found = outside_jobs(queue, jobs, directory)
    await outside_store.record_outside_jobs(sessionmaker, cluster, found, moment)
    return transitions


async def poll_cluster_once(
    sessionmaker: async_sessionmaker[AsyncSession],
    cluster: str,
    adapter: SchedulerAdapter,
    *,
    grace: Grace | None = None,
    now: datetime | None = None,
    work: CycleWork = NO_EXTRA_WORK,
) -> CycleResult:
    """Run one cycle; scheduler failures are recorded in cluster_status, not raised."""
    rules = grace or Grace()
    moment = now or utc_now()
    started = time.monotonic()
    calls = _Calls()
    jobs, queue = await read_rows_and_queue(sessionmaker, cluster, adapter, calls)
    transitions: list[Transition] = []
    reports = Reports()
    error: str | None = None
    try:
        if isinstance(queue, SchedulerError):
            raise queue
        transitions = await _settle(
            sessionmaker, cluster, adapter, (jobs, queue), moment, rules, calls
        )
        reports = await _extra_work(sessionmaker, cluster, adapter, work, calls, moment)
    except SchedulerError as exc:
        # Jobs keep their last known state: an unreachable cluster proves nothing about them.
        error = f"{type(exc).__name__}: {exc}"[:2000]
        logger.warning("poll of cluster %s failed: %s", cluster, error)
    seconds = time.monotonic() - started
    failures = await store.record_cycle(
        sessionmaker,
        cluster,
        now=moment,
        calls=calls.count,
        seconds=seconds,
        error=error,
        reports=reports,
    )
    return CycleResult(
        cluster, error is None, calls.count, seconds, len(jobs), len(transitions), failures, error
    )
