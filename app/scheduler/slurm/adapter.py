"""SlurmAdapter: the scheduler interface on top of the SSH and (optionally) REST transports.

Submissions and job actions run as the user. Listings run as the service identity. On
REST clusters, submit/cancel go through slurmrestd; the queue is listed with squeue over SSH
unless the cluster's ``queue_reads`` is "rest" (squeue with its record reuse costs a thirtieth
of slurmrestd's listing when anything changed: ADR 0036); accounting, log reads and
preflight still use SSH, because dbv0.0.38 misreports exit codes and files are only
reachable on the login host.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Sequence
from datetime import datetime
from typing import TypeVar

from app.scheduler.base import follow_file
from app.scheduler.cache import TtlCache
from app.scheduler.config import ClusterConfig
from app.scheduler.disk_usage import FilesystemUsage
from app.scheduler.errors import (
    InvalidSpec,
    PreflightFailed,
    SchedulerUnavailable,
    classify_control_error,
    classify_sbatch_error,
    is_transient,
)
from app.scheduler.nodes import NodesReport
from app.scheduler.slurm import commands, limits, parsing, squeue
from app.scheduler.slurm.login_node import disk_usage_as, read_log_chunk
from app.scheduler.slurm.marks import Marks
from app.scheduler.slurm.node_parsing import parse_nodes_report
from app.scheduler.slurm.preflight_checks import (
    association_problems,
    needed_folders,
    unmade_folders,
)
from app.scheduler.slurm.reservations import parse_reservations, reservations_argv
from app.scheduler.slurm.rest import RestTransport
from app.scheduler.slurm.rest_jobs import RestJobs
from app.scheduler.slurm.sftp import SftpFiles
from app.scheduler.slurm.ssh import SshTransport
from app.scheduler.slurm.terminal import SshTerminals
from app.scheduler.slurm.tunnel import SshTunnels
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
from app.scheduler.validation import validate_spec

PREFLIGHT_CACHE_SECONDS = 60.0


class SlurmAdapter:
    """Implements SchedulerAdapter for one Slurm cluster."""

    def __init__(
        self,
        config: ClusterConfig,
        ssh: SshTransport,
        rest: RestTransport | None = None,
        *,
        preflight_cache_seconds: float = PREFLIGHT_CACHE_SECONDS,
    ) -> None:
        self.config = config
        self.ssh = ssh
        self.rest = rest
        self.rest_jobs = RestJobs(rest) if rest is not None else None
        # Files travel over SFTP on the same pooled connections as the user's commands.
        self.files = SftpFiles(ssh, config.browse_roots)
        # Servers on compute nodes, through the login node when the portal has no route there.
        self.tunnels = SshTunnels(ssh) if config.compute_access == "via_login" else None
        # Login shells in the browser, on the same connections.
        self.terminals = SshTerminals(ssh)
        # Kept for the adapter's life: the marks reach squeue through its environment only.
        self._queue_reader = squeue.SqueueReader(Marks.new())
        # Preflight reuses these briefly: two of its four SSH round trips per submission.
        self._associations: TtlCache[str, list[Association]] = TtlCache(preflight_cache_seconds)
        self._partitions: TtlCache[str, list[PartitionInfo]] = TtlCache(preflight_cache_seconds)
        self._gres: TtlCache[str, dict[str, set[tuple[str, str]]]] = TtlCache(
            preflight_cache_seconds
        )

    async def submit(self, spec: JobSpec, as_user: str) -> str:
        """Validate, make the job's folders and submit as ``as_user``; returns the Slurm id.

        Over SSH the folders are made by the same command that runs sbatch, so a submission
        costs one round trip; a folder that cannot be made raises PreflightFailed and
        nothing is submitted.
        """
        validate_spec(spec, self.config.log_roots)
        folders = needed_folders(spec, as_user)
        rest = self.rest_jobs
        if rest is not None and (not spec.args or await rest.takes_script_args()):
            if problems := await self._make_folders(folders, as_user):
                raise PreflightFailed(problems)
            return await rest.submit(spec, as_user)
        argv = commands.submit_argv(spec, list(folders))
        result = await self.ssh.run(argv, as_user=as_user, stdin=spec.script, repeatable=False)
        if folders and result.exit_status == commands.FOLDERS_REFUSED:
            raise PreflightFailed(unmade_folders(folders, result.text))
        job_id = result.text.strip().split(";", 1)[0]
        if result.exit_status != 0 or not job_id.isdigit():
            said = result.stderr or result.text
            if is_transient(said):
                # Maybe queued after all: reconciliation by UUID settles it, not a refusal.
                raise SchedulerUnavailable(f"sbatch: {said.strip()}")
            raise classify_sbatch_error(said)
        return job_id

    async def preflight(self, spec: JobSpec, as_user: str, *, ask_sbatch: bool = True) -> None:
        """Raise PreflightFailed listing every problem found; create missing log dirs.

        ``ask_sbatch=False`` checks only what the cached cluster facts answer (account, QOS,
        partition, time limit, GPU type), usually without a round trip: what ``submit``'s
        own round trip (folders, then sbatch's verdict) does not already tell.
        """
        try:
            validate_spec(spec, self.config.log_roots)
        except InvalidSpec as exc:
            raise PreflightFailed([(exc.field, exc.message)]) from exc
        problems = await self._association_problems(spec, as_user)
        problems += await self._partition_problems(spec)
        if not problems:
            problems += await self._gres_problems(spec, fresh=False)
        if problems and ask_sbatch:
            problems += await self._directory_problems(spec, as_user)
        if problems:
            raise PreflightFailed(problems)
        if not ask_sbatch:
            return
        # Two independent round trips, asked at once: sbatch does not look at log folders.
        folders, verdict = await _both(
            self._directory_problems(spec, as_user), self._test_only_problems(spec, as_user)
        )
        # A folder that cannot be made is the problem to fix first; sbatch's verdict waits.
        problems, raw = (folders, "") if folders else verdict
        if problems:
            raise PreflightFailed(problems, raw)

    async def _association_problems(self, spec: JobSpec, user: str) -> list[tuple[str, str]]:
        if spec.account is None and spec.qos is None:
            return []
        cached = await self._associations.get(user, lambda: self.associations(user))
        if not association_problems(spec, cached):
            return []
        # A refusal is never based on a stale answer: a user just added to an account passes.
        self._associations.forget(user)
        fresh = await self._associations.get(user, lambda: self.associations(user))
        return association_problems(spec, fresh)

    async def _partition_problems(self, spec: JobSpec) -> list[tuple[str, str]]:
        problems = await self._partition_problems_from(spec, fresh=False)
        if problems:
            problems = await self._partition_problems_from(spec, fresh=True)
        return problems

    async def _partition_problems_from(
        self, spec: JobSpec, *, fresh: bool
    ) -> list[tuple[str, str]]:
        if fresh:
            self._partitions.forget("")
        partitions = {p.name: p for p in await self._partitions.get("", self.partitions)}
        chosen = spec.partition or next((p.name for p in partitions.values() if p.is_default), "")
        partition = partitions.get(chosen)
        if partition is None:
            names = ", ".join(sorted(partitions)) or "none"
            return [("partition", f"partition {chosen} does not exist (this cluster has: {names})")]
        minutes = spec.time_limit_minutes
        limit = partition.max_time
        if minutes is None or limit is None or minutes * 60 <= limit.total_seconds():
            return []
        shown = commands.format_minutes(int(limit.total_seconds()) // 60).removeprefix("0-")
        return [("time_limit", f"partition {chosen} allows at most {shown}")]

    async def _gres_problems(self, spec: JobSpec, *, fresh: bool) -> list[tuple[str, str]]:
        """A GPU (or other GRES) type the chosen partition's nodes do not have, named."""
        wanted = [g for g in spec.gres if g.type]
        if not wanted:
            return []
        if fresh:
            self._gres.forget("")
        partitions = await self._partitions.get("", self.partitions)
        chosen = spec.partition or next((p.name for p in partitions if p.is_default), "")
        available = (await self._gres.get("", self._gres_by_partition)).get(chosen, set())
        missing = [g for g in wanted if (g.name, g.type) not in available]
        if missing and not fresh:
            return await self._gres_problems(spec, fresh=True)
        problems = []
        for gres in missing:
            types = ", ".join(sorted(t for n, t in available if n == gres.name and t))
            problems.append(
                (
                    "gres",
                    f"{gres.name} type {gres.type} is not available in partition {chosen} "
                    f"(it has: {types or 'none'})",
                )
            )
        return problems

    async def _gres_by_partition(self) -> dict[str, set[tuple[str, str]]]:
        result = await self.ssh.run(commands.gres_argv())
        if result.exit_status != 0:
            raise SchedulerUnavailable(f"sinfo failed: {result.stderr.strip()}")
        return parsing.parse_gres(result.text)

    async def _directory_problems(self, spec: JobSpec, user: str) -> list[tuple[str, str]]:
        return await self._make_folders(needed_folders(spec, user), user)

    async def _make_folders(self, folders: dict[str, str], user: str) -> list[tuple[str, str]]:
        if not folders:
            return []
        result = await self.ssh.run(commands.ensure_dirs_argv(list(folders)), as_user=user)
        return unmade_folders(folders, result.text)

    async def _test_only_problems(
        self, spec: JobSpec, user: str
    ) -> tuple[list[tuple[str, str]], str]:
        """sbatch --test-only's verdict: the plain problem, and sbatch's own words."""
        if self.rest is not None:
            return [], ""
        argv = commands.sbatch_argv(spec, test_only=True)
        result = await self.ssh.run(argv, as_user=user, stdin=spec.script)
        if result.exit_status == 0:
            return [], ""
        raw = result.stderr.strip()
        if is_transient(raw):
            raise SchedulerUnavailable(f"sbatch --test-only: {raw}")
        return [("submission", classify_sbatch_error(raw).message)], raw

    async def queue(self) -> list[JobInfo]:
        """Every job in slurmctld's memory, from one squeue (or, where the cluster's
        ``queue_reads`` says so, one slurmrestd) call."""
        if self.rest_jobs is not None and self.config.queue_reads == "rest":
            return await self.rest_jobs.queue()
        marks = self._queue_reader.marks
        stdin = commands.squeue_format(marks.field, marks.end) + "\n"
        # Read as it arrives: parsed while squeue still prints, never held whole.
        reading = self._queue_reader.reading()
        result = await self.ssh.stream(commands.squeue_argv(), reading.feed, stdin=stdin)
        if result.exit_status != 0:
            raise SchedulerUnavailable(f"squeue failed: {result.stderr.strip()}")
        return reading.finish()

    async def accounting(
        self, job_ids: Sequence[str] | None = None, since: datetime | None = None
    ) -> list[JobInfo]:
        """Accounting records from one sacct call (steps folded into their jobs)."""
        # sacct takes its delimiter in argv, where the login node's users may read it: a
        # new one for every call.
        delimiter = Marks.new().field
        result = await self.ssh.run(commands.sacct_argv(job_ids, since, delimiter=delimiter))
        if result.exit_status != 0:
            raise SchedulerUnavailable(f"sacct failed: {result.stderr.strip()}")
        return parsing.parse_sacct(result.text, delimiter)

    async def cancel(self, job_ids: Sequence[str], as_user: str) -> None:
        """Cancel jobs as the user; PermissionDenied for other users' jobs."""
        if self.rest_jobs is not None and await self.rest_jobs.reports_cancel_failures():
            await self.rest_jobs.cancel(job_ids, as_user)
            return
        await self._control(commands.scancel_argv(job_ids), as_user)

    async def hold(self, job_ids: Sequence[str], as_user: str) -> None:
        """Hold pending jobs as the user."""
        if self.rest_jobs is not None and await self.rest_jobs.supports_holds():
            await self.rest_jobs.set_held(job_ids, as_user, held=True)
            return
        await self._control(commands.hold_argv(job_ids), as_user)

    async def release(self, job_ids: Sequence[str], as_user: str) -> None:
        """Release held jobs as the user."""
        if self.rest_jobs is not None and await self.rest_jobs.supports_holds():
            await self.rest_jobs.set_held(job_ids, as_user, held=False)
            return
        await self._control(commands.release_argv(job_ids), as_user)

    async def _control(self, argv: list[str], user: str) -> None:
        result = await self.ssh.run(argv, as_user=user)
        # scancel exits 0 even when it refuses some jobs, so stderr decides too.
        if result.exit_status != 0 or "error" in result.stderr.lower():
            raise classify_control_error(result.stderr or result.text)

    async def read_file(self, path: str, offset: int, limit: int, as_user: str) -> FileChunk:
        """Read a slice of a file as the user, after resolving symlinks on the cluster."""
        return await read_log_chunk(self.ssh, self.config.log_roots, path, offset, limit, as_user)

    def follow(
        self, path: str, as_user: str, *, offset: int = 0, interval: float = 1.0
    ) -> AsyncIterator[bytes]:
        """Yield bytes appended to ``path``; stops only when the consumer stops."""
        return follow_file(self, path, as_user, offset=offset, interval=interval)

    async def batch_script(self, job_id: str, as_user: str) -> str | None:
        """``scontrol write batch_script`` as the user: Slurm decides whose scripts they
        may read. None once the job has left slurmctld (or it refuses)."""
        result = await self.ssh.run(commands.batch_script_argv(job_id), as_user=as_user)
        if result.exit_status != 0:
            return None
        return result.text

    async def disk_usage(self, as_user: str) -> list[FilesystemUsage]:
        """The configured command run as the user, never as the service identity: quota
        tools report the caller, and a site script sees only what the user may see."""
        return await disk_usage_as(self.ssh, self.config, as_user)

    async def partitions(self) -> list[PartitionInfo]:
        """Partitions with limits and capacity, from one sinfo call."""
        result = await self.ssh.run(commands.sinfo_argv())
        if result.exit_status != 0:
            raise SchedulerUnavailable(f"sinfo failed: {result.stderr.strip()}")
        return parsing.parse_sinfo(result.text)

    async def reservations(self) -> list[Reservation]:
        """Every reservation, from one scontrol call."""
        result = await self.ssh.run(reservations_argv())
        if result.exit_status != 0:
            raise SchedulerUnavailable(f"scontrol failed: {result.stderr.strip()}")
        return parse_reservations(result.text)

    async def nodes(self) -> NodesReport:
        """Nodes and partitions' access rules, from one scontrol process."""
        result = await self.ssh.run(commands.nodes_argv(), stdin=commands.NODES_REQUESTS)
        if result.exit_status != 0:
            raise SchedulerUnavailable(f"scontrol failed: {result.stderr.strip()}")
        return parse_nodes_report(result.text)

    async def associations(self, user: str) -> list[Association]:
        """The user's associations, from one sacctmgr call."""
        result = await self.ssh.run(commands.associations_argv(user))
        if result.exit_status != 0:
            raise SchedulerUnavailable(f"sacctmgr failed: {result.stderr.strip()}")
        return parsing.parse_associations(result.text)

    async def account_limits(self) -> list[TresMinutesLimit]:
        """GrpTRESMins of every association of this cluster, from one sacctmgr call."""
        return await limits.fetch(self.ssh, self.config.name)

    async def ping(self) -> ClusterStatus:
        """Ask slurmctld (through slurmrestd on REST clusters) whether it is up."""
        started = time.perf_counter()
        try:
            is_up, detail = await self._probe()
        except SchedulerUnavailable as exc:
            return ClusterStatus(False, str(exc))
        return ClusterStatus(is_up, detail, (time.perf_counter() - started) * 1000)

    async def _probe(self) -> tuple[bool, str]:
        if self.rest_jobs is not None:
            return await self.rest_jobs.ping()
        result = await self.ssh.run(["scontrol", "ping"])
        return result.exit_status == 0 and "UP" in result.text, result.text.strip()

    async def close(self) -> None:
        """Close tunnels, SSH connections and the REST client."""
        if self.tunnels is not None:
            await self.tunnels.close()
        await self.ssh.close()
        if self.rest is not None:
            await self.rest.close()


_A = TypeVar("_A")
_B = TypeVar("_B")


async def _both(first: Awaitable[_A], second: Awaitable[_B]) -> tuple[_A, _B]:
    """Both results, or the first error once both have finished (neither is left running)."""
    a, b = await asyncio.gather(first, second, return_exceptions=True)
    for outcome in (a, b):
        if isinstance(outcome, BaseException):
            raise outcome
    return a, b  # type: ignore[return-value]
