"""The scheduler interface every adapter implements."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from datetime import datetime
from typing import Protocol, runtime_checkable

from app.scheduler.disk_usage import FilesystemUsage
from app.scheduler.nodes import NodesReport
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


@runtime_checkable
class SchedulerAdapter(Protocol):
    """What the portal may ask of a cluster's batch scheduler.

    Methods taking ``as_user`` act with that user's own identity on the cluster, so the
    scheduler's permission checks apply. Listing methods use the portal's service identity
    and make exactly one scheduler call however many jobs exist.
    """

    async def submit(self, spec: JobSpec, as_user: str) -> str:
        """Create the job's missing log and working folders as the user, submit, return its id.

        Raises InvalidSpec before contacting the cluster, PreflightFailed when a folder
        cannot be made (nothing is submitted), SubmitRejected when the scheduler refuses,
        SchedulerUnavailable/SchedulerTimeout when it cannot be reached.
        """
        ...

    async def preflight(self, spec: JobSpec, as_user: str, *, ask_sbatch: bool = True) -> None:
        """Check that ``spec`` would be accepted; raise PreflightFailed listing the problems.

        Creates missing log directories as the user where possible. ``ask_sbatch=False``
        leaves out what ``submit`` finds out anyway (folders, the scheduler's own verdict)
        and checks only what is known from the cluster's accounts and partitions.
        """
        ...

    async def queue(self) -> list[JobInfo]:
        """All jobs the scheduler currently holds in memory (pending, running, recent)."""
        ...

    async def accounting(
        self, job_ids: Sequence[str] | None = None, since: datetime | None = None
    ) -> list[JobInfo]:
        """Accounting records for the given jobs, or for all jobs since ``since``."""
        ...

    async def cancel(self, job_ids: Sequence[str], as_user: str) -> None:
        """Cancel jobs; PermissionDenied if they belong to someone else."""
        ...

    async def hold(self, job_ids: Sequence[str], as_user: str) -> None:
        """Keep pending jobs from starting."""
        ...

    async def release(self, job_ids: Sequence[str], as_user: str) -> None:
        """Let held jobs start again."""
        ...

    async def read_file(self, path: str, offset: int, limit: int, as_user: str) -> FileChunk:
        """Read up to ``limit`` bytes from ``offset`` of a file under the allowed roots."""
        ...

    def follow(
        self, path: str, as_user: str, *, offset: int = 0, interval: float = 1.0
    ) -> AsyncIterator[bytes]:
        """Yield new bytes appended to a file, polling every ``interval`` seconds."""
        ...

    async def batch_script(self, job_id: str, as_user: str) -> str | None:
        """The batch script the scheduler keeps for a job (an array's for its tasks), read
        as the user; None once the scheduler no longer has it."""
        ...

    async def disk_usage(self, as_user: str) -> list[FilesystemUsage]:
        """The user's space and files on each filesystem against their quotas, from the
        site's disk usage command run as the user (empty when no quota applies).

        Raises DiskUsageNotConfigured when the cluster has no such command, and
        DiskUsageUnavailable when it fails or prints nothing readable.
        """
        ...

    async def partitions(self) -> list[PartitionInfo]:
        """The cluster's partitions with limits and capacity."""
        ...

    async def reservations(self) -> list[Reservation]:
        """Every reservation the scheduler holds (maintenance windows among them)."""
        ...

    async def nodes(self) -> NodesReport:
        """Every node (state, CPUs, memory and GPUs allocated, features, drain reasons) and
        every partition's access rules, in one scheduler call."""
        ...

    async def associations(self, user: str) -> list[Association]:
        """Accounts (and partitions/QOS) the user may charge."""
        ...

    async def account_limits(self) -> list[TresMinutesLimit]:
        """Every association's limit on resource minutes (Slurm's GrpTRESMins), from one
        call with the service identity; empty for a scheduler that has no such limit."""
        ...

    async def ping(self) -> ClusterStatus:
        """Probe whether the scheduler answers."""
        ...

    async def close(self) -> None:
        """Release connections and clients."""
        ...


async def follow_file(
    adapter: SchedulerAdapter,
    path: str,
    as_user: str,
    *,
    offset: int = 0,
    interval: float = 1.0,
    chunk: int = 65536,
) -> AsyncIterator[bytes]:
    """Poll ``read_file`` and yield whatever was appended since the last read."""
    position = offset
    while True:
        piece = await adapter.read_file(path, position, chunk, as_user)
        if piece.data:
            yield piece.data
        position = piece.next_offset
        if piece.eof:
            await asyncio.sleep(interval)
