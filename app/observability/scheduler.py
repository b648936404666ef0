"""Scheduler call and submit metrics, by wrapping each cluster's adapter."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Awaitable, Mapping, Sequence
from datetime import datetime
from typing import TypeVar

from app.observability.metrics import (
    POLL_CYCLE_DURATION,
    POLL_CYCLES,
    POLL_TRANSITIONS,
    SCHEDULER_CALLS,
    SCHEDULER_LATENCY,
    SUBMITS,
)
from app.scheduler.base import SchedulerAdapter
from app.scheduler.capabilities import Capabilities, capabilities_of
from app.scheduler.config import ClusterConfig
from app.scheduler.disk_usage import FilesystemUsage
from app.scheduler.errors import InvalidSpec, PreflightFailed, SubmitRejected
from app.scheduler.files import FileStore, file_store_of
from app.scheduler.nodes import NodesReport
from app.scheduler.registry import SchedulerRegistry
from app.scheduler.terminals import Terminals, terminals_of
from app.scheduler.tunnels import ComputeTunnels, tunnels_of
from app.scheduler.types import (
    Association,
    ClusterStatus,
    FileChunk,
    JobInfo,
    JobSpec,
    PartitionInfo,
    Reservation,
    TresMinutesLimit,
)

T = TypeVar("T")


class InstrumentedAdapter:
    """Delegates every call to ``inner`` and counts it by kind and outcome."""

    def __init__(self, cluster: str, inner: SchedulerAdapter) -> None:
        self.cluster = cluster
        self.inner = inner

    @property
    def capabilities(self) -> Capabilities:
        """The wrapped adapter's: a PBS or LSF cluster stays one behind the metrics."""
        return capabilities_of(self.inner)

    @property
    def files(self) -> FileStore | None:
        """The wrapped adapter's file store: files are not scheduler calls."""
        return file_store_of(self.inner)

    @property
    def tunnels(self) -> ComputeTunnels | None:
        """The wrapped adapter's way to compute nodes through the login node, if it has one."""
        return tunnels_of(self.inner)

    @property
    def terminals(self) -> Terminals | None:
        """The wrapped adapter's login shells, if its cluster offers them."""
        return terminals_of(self.inner)

    async def _timed(self, kind: str, call: Awaitable[T]) -> T:
        started = time.perf_counter()
        outcome = "error"
        try:
            result = await call
            outcome = "ok"
            return result
        finally:
            SCHEDULER_CALLS.inc(self.cluster, kind, outcome)
            SCHEDULER_LATENCY.observe(time.perf_counter() - started, self.cluster, kind)

    async def submit(self, spec: JobSpec, as_user: str) -> str:
        try:
            job_id = await self._timed("submit", self.inner.submit(spec, as_user))
        except (SubmitRejected, PreflightFailed, InvalidSpec):
            SUBMITS.inc(self.cluster, "rejected")
            raise
        except Exception:
            SUBMITS.inc(self.cluster, "failed")
            raise
        SUBMITS.inc(self.cluster, "accepted")
        return job_id

    async def preflight(self, spec: JobSpec, as_user: str, *, ask_sbatch: bool = True) -> None:
        await self._timed("preflight", self.inner.preflight(spec, as_user, ask_sbatch=ask_sbatch))

    async def queue(self) -> list[JobInfo]:
        return await self._timed("queue", self.inner.queue())

    async def accounting(
        self, job_ids: Sequence[str] | None = None, since: datetime | None = None
    ) -> list[JobInfo]:
        return await self._timed("accounting", self.inner.accounting(job_ids, since))

    async def cancel(self, job_ids: Sequence[str], as_user: str) -> None:
        await self._timed("cancel", self.inner.cancel(job_ids, as_user))

    async def hold(self, job_ids: Sequence[str], as_user: str) -> None:
        await self._timed("hold", self.inner.hold(job_ids, as_user))

    async def release(self, job_ids: Sequence[str], as_user: str) -> None:
        await self._timed("release", self.inner.release(job_ids, as_user))

    async def read_file(self, path: str, offset: int, limit: int, as_user: str) -> FileChunk:
        return await self._timed("read_file", self.inner.read_file(path, offset, limit, as_user))

    def follow(
        self, path: str, as_user: str, *, offset: int = 0, interval: float = 1.0
    ) -> AsyncIterator[bytes]:
        return self.inner.follow(path, as_user, offset=offset, interval=interval)

    async def batch_script(self, job_id: str, as_user: str) -> str | None:
        return await self._timed("batch_script", self.inner.batch_script(job_id, as_user))

    async def disk_usage(self, as_user: str) -> list[FilesystemUsage]:
        return await self._timed("disk_usage", self.inner.disk_usage(as_user))

    async def partitions(self) -> list[PartitionInfo]:
        return await self._timed("partitions", self.inner.partitions())

    async def reservations(self) -> list[Reservation]:
        return await self._timed("reservations", self.inner.reservations())

    async def nodes(self) -> NodesReport:
        return await self._timed("nodes", self.inner.nodes())

    async def associations(self, user: str) -> list[Association]:
        return await self._timed("associations", self.inner.associations(user))

    async def account_limits(self) -> list[TresMinutesLimit]:
        return await self._timed("account_limits", self.inner.account_limits())

    async def ping(self) -> ClusterStatus:
        return await self._timed("ping", self.inner.ping())

    async def close(self) -> None:
        await self.inner.close()


class InstrumentedRegistry(SchedulerRegistry):
    """A SchedulerRegistry whose adapters report scheduler metrics."""

    def __init__(self, configs: Mapping[str, ClusterConfig]) -> None:
        super().__init__(configs)
        self._instrumented = {
            name: InstrumentedAdapter(name, super(InstrumentedRegistry, self).get(name))
            for name in configs
        }

    def get(self, cluster: str) -> SchedulerAdapter:
        if cluster in self._instrumented:
            return self._instrumented[cluster]
        return super().get(cluster)


def observe_cycle(cluster: str, *, is_ok: bool, seconds: float, transitions: int) -> None:
    """Record one poll cycle's outcome (called by the poll loop)."""
    POLL_CYCLES.inc(cluster, "ok" if is_ok else "error")
    POLL_CYCLE_DURATION.observe(seconds, cluster)
    POLL_TRANSITIONS.inc(cluster, amount=float(transitions))
