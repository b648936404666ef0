"""SlurmAdapter: the scheduler interface on top of the SSH and (optionally) REST transports.

Submissions and job actions run as the user. Listings run as the service identity. On
REST clusters, submit/cancel/queue go through slurmrestd; accounting, log reads and
preflight still use SSH, because dbv0.0.38 misreports exit codes and files are only
reachable on the login host.
"""

from __future__ import annotations

import posixpath
import time
from collections.abc import AsyncIterator, Sequence
from datetime import datetime

from app.scheduler.base import follow_file
from app.scheduler.cache import TtlCache
from app.scheduler.config import ClusterConfig
from app.scheduler.errors import (
    FileUnavailable,
    InvalidSpec,
    PreflightFailed,
    RejectKind,
    SchedulerUnavailable,
    SubmitRejected,
    classify_control_error,
    classify_sbatch_error,
)
from app.scheduler.slurm import commands, parsing
from app.scheduler.slurm.rest import RestRequestFailed, RestTransport
from app.scheduler.slurm.rest_parsing import job_from_v0038, submit_payload_v0038
from app.scheduler.slurm.ssh import SshTransport
from app.scheduler.types import (
    Association,
    ClusterStatus,
    FileChunk,
    JobInfo,
    JobSpec,
    PartitionInfo,
)
from app.scheduler.validation import is_under_roots, resolve_log_path, validate_spec

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
        # Preflight reuses these briefly: two of its four SSH round trips per submission.
        self._associations: TtlCache[str, list[Association]] = TtlCache(preflight_cache_seconds)
        self._partitions: TtlCache[str, list[PartitionInfo]] = TtlCache(preflight_cache_seconds)

    async def submit(self, spec: JobSpec, as_user: str) -> str:
        """Validate, then submit as ``as_user``; returns the Slurm job id."""
        validate_spec(spec, self.config.log_roots)
        if self.rest is not None:
            return await self._submit_rest(spec, as_user)
        result = await self.ssh.run(
            commands.sbatch_argv(spec), as_user=as_user, stdin=spec.script, repeatable=False
        )
        job_id = result.text.strip().split(";", 1)[0]
        if result.exit_status != 0 or not job_id.isdigit():
            raise classify_sbatch_error(result.stderr or result.text)
        return job_id

    async def _submit_rest(self, spec: JobSpec, as_user: str) -> str:
        assert self.rest is not None
        body = submit_payload_v0038(spec, default_cwd=f"/home/{as_user}")
        try:
            answer = await self.rest.call("POST", "job/submit", as_user=as_user, body=body)
        except RestRequestFailed as exc:
            # A held submission comes back as an "error" that still carries the job id.
            if exc.status != 200 or not isinstance(exc.payload.get("job_id"), int):
                raise exc.as_submit_error() from exc
            answer = dict(exc.payload)
        job_id = answer.get("job_id")
        if not isinstance(job_id, int):
            raise SubmitRejected(RejectKind.OTHER, "slurmrestd returned no job id", str(answer))
        return str(job_id)

    async def preflight(self, spec: JobSpec, as_user: str) -> None:
        """Raise PreflightFailed listing every problem found; create missing log dirs."""
        try:
            validate_spec(spec, self.config.log_roots)
        except InvalidSpec as exc:
            raise PreflightFailed([(exc.field, exc.message)]) from exc
        problems = await self._association_problems(spec, as_user)
        problems += await self._partition_problems(spec)
        problems += await self._directory_problems(spec, as_user)
        if not problems:
            problems += await self._test_only_problems(spec, as_user)
        if problems:
            raise PreflightFailed(problems)

    async def _association_problems(self, spec: JobSpec, user: str) -> list[tuple[str, str]]:
        if spec.account is None:
            return []
        cached = await self._associations.get(user, lambda: self.associations(user))
        if spec.account in {a.account for a in cached}:
            return []
        # A refusal is never based on a stale answer: a user just added to an account passes.
        self._associations.forget(user)
        fresh = await self._associations.get(user, lambda: self.associations(user))
        allowed = {a.account for a in fresh}
        if spec.account in allowed:
            return []
        choices = ", ".join(sorted(allowed)) or "none"
        return [("account", f"you cannot charge account {spec.account} (yours: {choices})")]

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
            return [("partition", f"partition {chosen} does not exist")]
        minutes = spec.time_limit_minutes
        limit = partition.max_time
        if minutes is None or limit is None or minutes * 60 <= limit.total_seconds():
            return []
        shown = commands.format_minutes(int(limit.total_seconds()) // 60).removeprefix("0-")
        return [("time_limit", f"partition {chosen} allows at most {shown}")]

    async def _directory_problems(self, spec: JobSpec, user: str) -> list[tuple[str, str]]:
        wanted: dict[str, str] = {}
        for field, path in (("stdout", spec.stdout), ("stderr", spec.stderr)):
            if path is not None:
                wanted.setdefault(posixpath.dirname(path), field)
        if spec.working_dir is not None:
            wanted.setdefault(spec.working_dir, "working_dir")
        dirs = [d for d in wanted if "%" not in d]
        if not dirs:
            return []
        result = await self.ssh.run(commands.ensure_dirs_argv(dirs), as_user=user)
        bad = [line for line in result.text.splitlines() if line]
        return [(wanted[d], f"directory {d} cannot be created or is not writable") for d in bad]

    async def _test_only_problems(self, spec: JobSpec, user: str) -> list[tuple[str, str]]:
        if self.rest is not None:
            return []
        argv = commands.sbatch_argv(spec, test_only=True)
        result = await self.ssh.run(argv, as_user=user, stdin=spec.script)
        if result.exit_status == 0:
            return []
        return [("submission", classify_sbatch_error(result.stderr).message)]

    async def queue(self) -> list[JobInfo]:
        """Every job in slurmctld's memory, from one squeue (or one REST) call."""
        if self.rest is not None:
            payload = await self.rest.call("GET", "jobs")
            return [job_from_v0038(job) for job in payload.get("jobs", [])]
        result = await self.ssh.run(commands.squeue_argv())
        if result.exit_status != 0:
            raise SchedulerUnavailable(f"squeue failed: {result.stderr.strip()}")
        return parsing.parse_squeue(result.text)

    async def accounting(
        self, job_ids: Sequence[str] | None = None, since: datetime | None = None
    ) -> list[JobInfo]:
        """Accounting records from one sacct call (steps folded into their jobs)."""
        result = await self.ssh.run(commands.sacct_argv(job_ids, since))
        if result.exit_status != 0:
            raise SchedulerUnavailable(f"sacct failed: {result.stderr.strip()}")
        return parsing.parse_sacct(result.text)

    async def cancel(self, job_ids: Sequence[str], as_user: str) -> None:
        """Cancel jobs as the user; PermissionDenied for other users' jobs."""
        if self.rest is None:
            await self._control(commands.scancel_argv(job_ids), as_user)
            return
        for job_id in commands.check_job_ids(job_ids):
            try:
                await self.rest.call("DELETE", f"job/{job_id}", as_user=as_user)
            except RestRequestFailed as exc:
                raise exc.as_control_error() from exc

    async def hold(self, job_ids: Sequence[str], as_user: str) -> None:
        """Hold pending jobs as the user."""
        await self._control(commands.hold_argv(job_ids), as_user)

    async def release(self, job_ids: Sequence[str], as_user: str) -> None:
        """Release held jobs as the user."""
        await self._control(commands.release_argv(job_ids), as_user)

    async def _control(self, argv: list[str], user: str) -> None:
        result = await self.ssh.run(argv, as_user=user)
        # scancel exits 0 even when it refuses some jobs, so stderr decides too.
        if result.exit_status != 0 or "error" in result.stderr.lower():
            raise classify_control_error(result.stderr or result.text)

    async def read_file(self, path: str, offset: int, limit: int, as_user: str) -> FileChunk:
        """Read a slice of a file as the user, after resolving symlinks on the cluster."""
        clean = resolve_log_path(path, self.config.log_roots)
        real = await self.ssh.run(commands.realpath_argv(clean), as_user=as_user)
        resolved = real.text.strip()
        if real.exit_status != 0 or not resolved:
            raise FileUnavailable(f"{clean} does not exist or cannot be read")
        if not is_under_roots(resolved, self.config.log_roots):
            raise FileUnavailable(f"{clean} points outside the allowed directories")
        result = await self.ssh.run(
            commands.read_chunk_argv(resolved, offset, limit), as_user=as_user
        )
        if result.exit_status != 0:
            raise FileUnavailable(f"{clean} cannot be read: {result.stderr.strip()}")
        size, data = parsing.parse_read_chunk(result.stdout, offset)
        next_offset = offset + len(data)
        return FileChunk(data, offset, next_offset, next_offset >= size, size)

    def follow(
        self, path: str, as_user: str, *, offset: int = 0, interval: float = 1.0
    ) -> AsyncIterator[bytes]:
        """Yield bytes appended to ``path``; stops only when the consumer stops."""
        return follow_file(self, path, as_user, offset=offset, interval=interval)

    async def partitions(self) -> list[PartitionInfo]:
        """Partitions with limits and capacity, from one sinfo call."""
        result = await self.ssh.run(commands.sinfo_argv())
        if result.exit_status != 0:
            raise SchedulerUnavailable(f"sinfo failed: {result.stderr.strip()}")
        return parsing.parse_sinfo(result.text)

    async def associations(self, user: str) -> list[Association]:
        """The user's associations, from one sacctmgr call."""
        result = await self.ssh.run(commands.associations_argv(user))
        if result.exit_status != 0:
            raise SchedulerUnavailable(f"sacctmgr failed: {result.stderr.strip()}")
        return parsing.parse_associations(result.text)

    async def ping(self) -> ClusterStatus:
        """Ask slurmctld (through slurmrestd on REST clusters) whether it is up."""
        started = time.perf_counter()
        try:
            is_up, detail = await self._probe()
        except SchedulerUnavailable as exc:
            return ClusterStatus(False, str(exc))
        return ClusterStatus(is_up, detail, (time.perf_counter() - started) * 1000)

    async def _probe(self) -> tuple[bool, str]:
        if self.rest is not None:
            pings = (await self.rest.call("GET", "ping")).get("pings", [])
            return any(p.get("ping") == "UP" for p in pings), str(pings)
        result = await self.ssh.run(["scontrol", "ping"])
        return result.exit_status == 0 and "UP" in result.text, result.text.strip()

    async def close(self) -> None:
        """Close SSH connections and the REST client."""
        await self.ssh.close()
        if self.rest is not None:
            await self.rest.close()
