"""The poll loop: one task per cluster, a lease so only one process polls each cluster,
jittered intervals and capped exponential back-off for a cluster that keeps failing."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import random
import socket
import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import timedelta

from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.config import Settings
from app.models import utc_now
from app.notifications.dispatcher import dispatch_forever
from app.observability.metrics import POLLER_LEASE_HELD
from app.observability.scheduler import observe_cycle
from app.poller import lease
from app.poller.cycle import CycleWork, poll_cluster_once
from app.poller.reconcile import Grace
from app.scheduler.base import SchedulerAdapter

logger = logging.getLogger(__name__)
# A cluster back from maintenance is seen within a minute; one failing squeue a minute
# costs a down controller nothing. Intervals longer than this are kept as they are.
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
        return jittered(min(backoff, max(MAX_BACKOFF_SECONDS, self.interval)))


@dataclass
class ExtraWorkSchedule:
    """Decides which cycles also report partitions or ingest usage (ADR 0002 budget).

    Counted only on cycles this process polls, so a standby that takes over starts afresh.
    """

    partitions_every: int = 6
    usage_every: float = 300.0
    cycles: int = 0
    last_usage: float | None = None

    def due(self, now: float) -> CycleWork:
        usage = self.usage_every > 0 and (
            self.last_usage is None or now - self.last_usage >= self.usage_every
        )
        return CycleWork(partitions=self.cycles % self.partitions_every == 0, usage=usage)

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


async def _one_turn(
    sessionmaker: async_sessionmaker[AsyncSession],
    cluster: str,
    adapter: SchedulerAdapter,
    holder: str,
    timing: PollTiming,
    grace: Grace,
    schedule: ExtraWorkSchedule,
) -> tuple[bool, float]:
    """(holds the lease, seconds until the next turn)."""
    if not await lease.acquire(sessionmaker, cluster, holder, utc_now(), timing.lease):
        POLLER_LEASE_HELD.set(0, cluster)
        return False, timing.standby_retry
    POLLER_LEASE_HELD.set(1, cluster)
    started = time.monotonic()
    work = schedule.due(started)
    result = await poll_cluster_once(sessionmaker, cluster, adapter, grace=grace, work=work)
    schedule.ran(work, started)
    observe_cycle(
        cluster, is_ok=result.is_ok, seconds=result.seconds, transitions=result.transitions
    )
    # The lease (1.5 intervals) is renewed only here, so the cycle's own duration counts
    # toward the wait: otherwise a slow cycle lets the lease lapse while its holder lives.
    elapsed = time.monotonic() - started
    return True, max(0.0, timing.after_cycle(result.consecutive_failures) - elapsed)


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
) -> None:
    rules = grace or Grace()
    extra = schedule or ExtraWorkSchedule()
    holds_lease = False
    failures = 0
    try:
        while not stop_event.is_set():
            try:
                holds_lease, delay = await _one_turn(
                    sessionmaker, cluster, adapter, holder, timing, rules, extra
                )
                failures = 0
            except (SQLAlchemyError, OSError):
                failures += 1
                logger.exception("poller for %s cannot reach the database", cluster)
                delay = timing.after_cycle(failures)
            await _wait(stop_event, delay)
    finally:
        POLLER_LEASE_HELD.set(0, cluster)
        if holds_lease:
            with contextlib.suppress(SQLAlchemyError, OSError):
                await lease.release(sessionmaker, cluster, holder, utc_now())


async def run_poller(
    settings: Settings,
    sessionmaker: async_sessionmaker[AsyncSession],
    adapters: Mapping[str, SchedulerAdapter],
    stop_event: asyncio.Event,
    *,
    holder: str | None = None,
    grace: Grace | None = None,
) -> None:
    """Poll every cluster until ``stop_event`` is set; one failing cluster stalls no other."""
    timing = PollTiming(settings.poll_interval)
    name = holder or default_holder()
    async with asyncio.TaskGroup() as group:
        for cluster, adapter in adapters.items():
            group.create_task(
                poll_cluster_forever(
                    sessionmaker,
                    cluster,
                    adapter,
                    stop_event,
                    timing=timing,
                    holder=name,
                    grace=grace,
                    schedule=ExtraWorkSchedule(
                        settings.partitions_every, settings.usage_ingest_interval
                    ),
                ),
                name=f"poller:{cluster}",
            )
        # Notifications are sent by the active poller, at the pace its cycles find changes.
        group.create_task(
            dispatch_forever(
                settings, sessionmaker, stop_event, holder=name, interval=timing.interval
            ),
            name="notifications",
        )
