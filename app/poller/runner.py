"""The poll loop: one task per cluster, a lease so only one process polls each cluster,
jittered intervals and capped exponential back-off for a cluster that keeps failing."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import os
import random
import socket
import time
import uuid
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from datetime import timedelta

from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.config import Settings
from app.models.base import utc_now
from app.notifications.dispatcher import DISPATCHER_TASK, dispatch_forever
from app.observability.metrics import POLLER_LEASE_HELD
from app.observability.scheduler import observe_cycle
from app.observability.supervisor import TaskBoard, supervise
from app.poller import lease
from app.poller.cycle import CycleWork, poll_cluster_once
from app.poller.fresh import LOOK_EVERY, FreshWatch
from app.poller.idle import IdleWatch, check_idle_after
from app.poller.reconcile import Grace
from app.scheduler.base import SchedulerAdapter

logger = logging.getLogger(__name__)
# A cluster back from maintenance is seen within a minute; one failing squeue a minute
# costs a down controller nothing. Intervals longer than this are kept as they are.
# PORTAL_POLL_BACKOFF_MAX changes it (the outage tests prove recovery with 5 s).
MAX_BACKOFF_SECONDS = 60.0
JITTER = 0.1


@dataclass(frozen=True, slots=True)
class PollTiming:
    """Derived from the interval so a standby takes over within two intervals.

    The holder renews every interval (+10 % jitter), so the lease must outlive that gap;
    a standby retries every quarter interval, so takeover happens at most
    1.5 + 0.25 intervals after the holder's last renewal.
    """

    interval: float
    backoff_max: float = MAX_BACKOFF_SECONDS

    @property
    def lease(self) -> timedelta:
        return timedelta(seconds=self.interval * 1.5)

    @property
    def standby_retry(self) -> float:
        return self.interval / 4

    def after_cycle(self, consecutive_failures: int) -> float:
        if consecutive_failures == 0:
            return jittered(self.interval)
        backoff = self.interval * 2 ** min(consecutive_failures, 16)
        return jittered(min(backoff, max(self.backoff_max, self.interval)))


@dataclass
class ExtraWorkSchedule:
    """Decides which cycles also report partitions or nodes, read reservations or ingest
    usage (ADR 0002 budget; the nodes, ADR 0025).

    Counted only on cycles this process polls, so a standby that takes over starts afresh.
    Reservations fall half a period after partitions, so the two never share a cycle
    (unless read on every cycle).
    """

    partitions_every: int = 6
    usage_every: float = 300.0
    reservations_every: int = 6
    nodes_every: int = 3
    idle_every: int = 3
    cycles: int = 0
    last_usage: float | None = None

    def due(self, now: float) -> CycleWork:
        usage = self.usage_every > 0 and (
            self.last_usage is None or now - self.last_usage >= self.usage_every
        )
        reservations = self.cycles % self.reservations_every == self.reservations_every // 2
        return CycleWork(
            partitions=self.cycles % self.partitions_every == 0,
            nodes=self.cycles % self.nodes_every == 0,
            usage=usage,
            reservations=reservations,
            idle=self.cycles % self.idle_every == self.idle_every - 1,
        )

    def ran(self, work: CycleWork, now: float) -> None:
        # A failed ingestion also waits for the next slot: a failing cluster gets no extra calls.
        self.cycles += 1
        if work.usage:
            self.last_usage = now


def jittered(seconds: float) -> float:
    # Spreads several pollers and clusters apart; not a security use of randomness.
    return seconds * random.uniform(1 - JITTER, 1 + JITTER)  # noqa: S311


def default_holder() -> str:
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


async def _wait(stop_event: asyncio.Event, seconds: float) -> None:
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(stop_event.wait(), timeout=seconds)


async def _wait_watching(
    stop_event: asyncio.Event,
    delay: float,
    watch: FreshWatch,
    sessionmaker: async_sessionmaker[AsyncSession],
    cluster: str,
) -> None:
    """Wait ``delay`` seconds, or less when a fresh submission wants a look; never less
    than the watch's own interval since the cycle ended."""
    started = time.monotonic()
    deadline = started + delay
    await _wait(stop_event, min(delay, watch.interval))
    while not stop_event.is_set():
        now = time.monotonic()
        if now >= deadline or await watch.wants_a_look(sessionmaker, cluster, now):
            return
        await _wait(stop_event, min(LOOK_EVERY, deadline - now))


async def _one_turn(
    sessionmaker: async_sessionmaker[AsyncSession],
    cluster: str,
    adapter: SchedulerAdapter,
    holder: str,
    timing: PollTiming,
    grace: Grace,
    schedule: ExtraWorkSchedule,
    idle: IdleWatch | None = None,
) -> tuple[bool, float, bool]:
    """(holds the lease, seconds until the next turn, whether the cluster answered)."""
    if not await lease.acquire(sessionmaker, cluster, holder, utc_now(), timing.lease):
        POLLER_LEASE_HELD.set(0, cluster)
        return False, timing.standby_retry, False
    POLLER_LEASE_HELD.set(1, cluster)
    started = time.monotonic()
    work = schedule.due(started)
    result = await poll_cluster_once(sessionmaker, cluster, adapter, grace=grace, work=work)
    if work.idle and result.is_ok and idle is not None:
        await check_idle_after(sessionmaker, cluster, adapter, idle)
    schedule.ran(work, started)
    observe_cycle(
        cluster, is_ok=result.is_ok, seconds=result.seconds, transitions=result.transitions
    )
    # The lease (1.5 intervals) is renewed only here, so the cycle's own duration counts
    # toward the wait: otherwise a slow cycle lets the lease lapse while its holder lives.
    elapsed = time.monotonic() - started
    delay = max(0.0, timing.after_cycle(result.consecutive_failures) - elapsed)
    return True, delay, result.consecutive_failures == 0


async def poll_cluster_forever(
    sessionmaker: async_sessionmaker[AsyncSession],
    cluster: str,
    adapter: SchedulerAdapter,
    stop_event: asyncio.Event,
    *,
    timing: PollTiming,
    holder: str,
    grace: Grace | None = None,
    schedule: ExtraWorkSchedule | None = None,
    watch: FreshWatch | None = None,
    idle: IdleWatch | None = None,
) -> None:
    rules = grace or Grace()
    extra = schedule or ExtraWorkSchedule()
    fresh = watch or FreshWatch(0)
    holds_lease = False
    failures = 0
    if fresh.is_on(timing.interval):
        # Where watching starts: a submission from now on is news to the cycles after this one.
        await fresh.wants_a_look(sessionmaker, cluster, time.monotonic())
    try:
        while not stop_event.is_set():
            is_healthy = False
            try:
                holds_lease, delay, is_healthy = await _one_turn(
                    sessionmaker, cluster, adapter, holder, timing, rules, extra, idle
                )
                failures = 0
            except (SQLAlchemyError, OSError):
                failures += 1
                logger.exception("poller for %s cannot reach the database", cluster)
                delay = timing.after_cycle(failures)
            if is_healthy and fresh.is_on(timing.interval):
                await _wait_watching(stop_event, delay, fresh, sessionmaker, cluster)
            else:
                await _wait(stop_event, delay)
    finally:
        POLLER_LEASE_HELD.set(0, cluster)
        if holds_lease:
            with contextlib.suppress(SQLAlchemyError, OSError):
                await lease.release(sessionmaker, cluster, holder, utc_now())


def _cluster_work(
    settings: Settings,
    sessionmaker: async_sessionmaker[AsyncSession],
    cluster: str,
    adapter: SchedulerAdapter,
    stop_event: asyncio.Event,
    *,
    timing: PollTiming,
    holder: str,
    grace: Grace,
    idle: IdleWatch | None,
) -> Callable[[], Awaitable[None]]:
    def work() -> Awaitable[None]:
        # A fresh schedule on each start: a task that failed begins as a new poller would.
        schedule = ExtraWorkSchedule(
            partitions_every=settings.partitions_every,
            usage_every=settings.usage_ingest_interval,
            reservations_every=settings.reservations_every,
            nodes_every=settings.nodes_every,
            idle_every=settings.idle_every,
        )
        return poll_cluster_forever(
            sessionmaker,
            cluster,
            adapter,
            stop_event,
            timing=timing,
            holder=holder,
            grace=grace,
            schedule=schedule,
            watch=FreshWatch(settings.poll_fresh_interval),
            idle=idle,
        )

    return work


# The poller keeps each queued job's record from one cycle to the next (record reuse), and a
# cycle over a large queue allocates tens of thousands of objects: at CPython's first-generation
# threshold (700 allocations) the collector walked everything often enough to take 40 % of a
# 10,000-job cycle's own work (bench/bench_poller_pbs_lsf.py). At 10,000 it runs 14 times less
# often; garbage is still collected, and memory was unchanged.
FIRST_GENERATION_THRESHOLD = 10_000


def collect_less_often() -> None:
    """Raise the collector's first-generation threshold to FIRST_GENERATION_THRESHOLD."""
    first, *older = gc.get_threshold()
    gc.set_threshold(max(first, FIRST_GENERATION_THRESHOLD), *older)


async def run_poller(
    settings: Settings,
    sessionmaker: async_sessionmaker[AsyncSession],
    adapters: Mapping[str, SchedulerAdapter],
    stop_event: asyncio.Event,
    *,
    holder: str | None = None,
    grace: Grace | None = None,
    board: TaskBoard | None = None,
    idle: IdleWatch | None = None,
) -> None:
    """Poll every cluster until ``stop_event`` is set; no failing task stalls or ends another.

    ``idle`` checks the clusters' running interactive sessions for idleness every
    ``settings.idle_every`` cycles (app/poller/idle.py); without it they are not checked.

    Every task runs supervised (``app.observability.supervisor``): the group only ever sees
    them end on ``stop_event`` or on cancellation, so one task's exception cancels no other."""
    collect_less_often()
    rules = grace or Grace(submit=timedelta(seconds=settings.submit_grace))
    name = holder or default_holder()
    tasks = board if board is not None else TaskBoard()
    # One timing for every cluster and the dispatcher: the interval and the back-off ceiling.
    timing = PollTiming(settings.poll_interval, settings.poll_backoff_max)
    async with asyncio.TaskGroup() as group:
        for cluster, adapter in adapters.items():
            work = _cluster_work(
                settings,
                sessionmaker,
                cluster,
                adapter,
                stop_event,
                timing=timing,
                holder=name,
                grace=rules,
                idle=idle,
            )
            task = f"poller:{cluster}"
            group.create_task(supervise(task, work, stop_event, tasks), name=task)
        # Notifications are sent by the active poller, at the pace its cycles find changes.
        group.create_task(
            supervise(
                DISPATCHER_TASK,
                lambda: dispatch_forever(
                    settings,
                    sessionmaker,
                    stop_event,
                    holds_lease=lambda: lease.holds_any(sessionmaker, name, utc_now()),
                    interval=timing.interval,
                    board=tasks,
                ),
                stop_event,
                tasks,
            ),
            name=DISPATCHER_TASK,
        )
