"""PbsAdapter: the scheduler interface for an OpenPBS / PBS Professional cluster, over SSH.

Submissions and job actions run as the user with the same short-lived certificates as on
Slurm clusters; listings run as the service identity (the server must let it see every job:
``query_other_jobs = True``). PBS has no REST API the portal uses, no accounts to check a
user against, no expected start times and keeps no batch script a user may read back:
``CAPABILITIES`` says so, and pages and the API leave those out.
"""

from __future__ import annotations

import posixpath
import time
from collections.abc import AsyncIterator, Sequence
from datetime import datetime

from app.scheduler.base import follow_file
from app.scheduler.capabilities import Capabilities
from app.scheduler.config import ClusterConfig
from app.scheduler.disk_usage import FilesystemUsage
from app.scheduler.errors import (
    InvalidSpec,
    PreflightFailed,
    SchedulerUnavailable,
)
from app.scheduler.nodes import NodesReport
from app.scheduler.pbs import commands, parsing
from app.scheduler.pbs import reservations as rstat
from app.scheduler.pbs.directives import check_against_cluster, read_pbs_directives
from app.scheduler.pbs.errors import classify_control_error, classify_qsub_error, is_transient
from app.scheduler.pbs.qstat_stream import QstatAnswerError, QstatReader
from app.scheduler.slurm import commands as shell
from app.scheduler.slurm.login_node import disk_usage_as, read_log_chunk
from app.scheduler.slurm.preflight_checks import unmade_folders
from app.scheduler.slurm.sftp import SftpFiles
from app.scheduler.slurm.ssh import SshTransport
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

CAPABILITIES = Capabilities(
    scheduler="pbs",
    partition_word="queue",
    rest_api=False,
    expected_start=False,
    accounts=False,
    batch_script=False,
    account_limits=False,
    array_lists=False,
)


class PbsAdapter:
    """Implements SchedulerAdapter for one PBS cluster."""

    capabilities = CAPABILITIES

    def __init__(self, config: ClusterConfig, ssh: SshTransport) -> None:
        self.config = config
        self.ssh = ssh
        self.rest = None
        self.files = SftpFiles(ssh, config.browse_roots)
        self.tunnels = SshTunnels(ssh) if config.compute_access == "via_login" else None
        self._queue_reader = QstatReader()

    async def submit(self, spec: JobSpec, as_user: str) -> str:
        """Make the job's folders and qsub as ``as_user`` in one round trip; PBS's job id."""
        validate_spec(spec, self.config.log_roots)
        folders = _needed_folders(spec, as_user)
        argv = commands.submit_argv(spec, as_user, list(folders))
        result = await self.ssh.run(argv, as_user=as_user, stdin=spec.script, repeatable=False)
        if folders and result.exit_status == shell.FOLDERS_REFUSED:
            raise PreflightFailed(unmade_folders(folders, result.text))
        job_id = result.text.strip().splitlines()[-1] if result.text.strip() else ""
        if result.exit_status != 0 or not job_id[:1].isdigit():
            said = result.stderr or result.text
            if is_transient(said):
                raise SchedulerUnavailable(f"qsub: {said.strip()}")
            raise classify_qsub_error(said)
        return job_id

    async def preflight(self, spec: JobSpec, as_user: str, *, ask_sbatch: bool = True) -> None:
        """The spec's own checks, its queue and walltime against the queues, and its folders."""
        try:
            validate_spec(spec, self.config.log_roots)
            commands.qsub_options(spec, as_user)
        except InvalidSpec as exc:
            raise PreflightFailed([(exc.field, exc.message)]) from exc
        status = await self._status()
        # The script's own #PBS lines first: they name the line to change.
        problems = script_problems(spec.script, status) or queue_problems(
            spec, parsing.parse_queues(status)
        )
        if ask_sbatch or problems:
            problems += await self._make_folders(_needed_folders(spec, as_user), as_user)
        if problems:
            raise PreflightFailed(problems)

    async def _make_folders(self, folders: dict[str, str], user: str) -> list[tuple[str, str]]:
        if not folders:
            return []
        result = await self.ssh.run(shell.ensure_dirs_argv(list(folders)), as_user=user)
        return unmade_folders(folders, result.text)

    async def queue(self) -> list[JobInfo]:
        """Every job and array task the server holds, finished ones of the history included
        (``qstat -x``): one call, as the poller expects, read as it arrives."""
        reading = self._queue_reader.reading()
        try:
            result = await self.ssh.stream(commands.qstat_argv(history=True), reading.feed)
            if result.exit_status != 0 and reading.blank:
                raise SchedulerUnavailable(f"qstat failed: {result.stderr.strip()}")
            return reading.finish()
        except QstatAnswerError as exc:
            # A failed cycle the cluster's status shows, as an unreachable server is.
            raise SchedulerUnavailable(f"qstat's answer could not be read: {exc}") from exc

    async def accounting(
        self, job_ids: Sequence[str] | None = None, since: datetime | None = None
    ) -> list[JobInfo]:
        """PBS keeps no accounting database the portal reads: the server's job history
        (``qstat -x``) answers for the jobs it still holds."""
        jobs = await self._qstat(commands.qstat_argv(job_ids, history=True))
        if since is None:
            return jobs
        return [j for j in jobs if j.submit_time is None or j.submit_time >= since]

    async def _qstat(self, argv: list[str]) -> list[JobInfo]:
        result = await self.ssh.run(argv)
        # Asked for ids it no longer knows, qstat still prints the others and exits non-zero.
        if result.exit_status != 0 and not result.text.strip():
            if "unknown job id" in result.stderr.lower():
                return []
            raise SchedulerUnavailable(f"qstat failed: {result.stderr.strip()}")
        return parsing.parse_jobs(result.text)

    async def cancel(self, job_ids: Sequence[str], as_user: str) -> None:
        """qdel as the user; PermissionDenied for other users' jobs."""
        await self._control(commands.qdel_argv(job_ids), as_user)

    async def hold(self, job_ids: Sequence[str], as_user: str) -> None:
        """A user hold on queued jobs."""
        await self._control(commands.qhold_argv(job_ids), as_user)

    async def release(self, job_ids: Sequence[str], as_user: str) -> None:
        """Release the user hold."""
        await self._control(commands.qrls_argv(job_ids), as_user)

    async def _control(self, argv: list[str], user: str) -> None:
        result = await self.ssh.run(argv, as_user=user)
        if result.exit_status != 0:
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
        """PBS shows a job's script to no one but root (``printjob``): always None."""
        return None

    async def disk_usage(self, as_user: str) -> list[FilesystemUsage]:
        """The configured disk usage command, run as the user."""
        return await disk_usage_as(self.ssh, self.config, as_user)

    async def _status(self) -> str:
        result = await self.ssh.run(commands.status_argv())
        if result.exit_status != 0:
            raise SchedulerUnavailable(f"qstat failed: {result.stderr.strip()}")
        return result.text

    async def partitions(self) -> list[PartitionInfo]:
        """Execution queues with their walltime limits and the nodes' capacity: one call."""
        return parsing.parse_queues(await self._status())

    async def reservations(self) -> list[Reservation]:
        """Every reservation (``pbs_rstat -f``); maintenance ones (``M…``) carry MAINT."""
        result = await self.ssh.run(rstat.rstat_argv())
        if result.exit_status != 0:
            raise SchedulerUnavailable(f"pbs_rstat failed: {result.stderr.strip()}")
        return rstat.parse_reservations(result.text)

    async def nodes(self) -> NodesReport:
        """Nodes (``pbsnodes -a``) and the queues' access rules, in one call."""
        return parsing.parse_status_nodes(await self._status())

    async def associations(self, user: str) -> list[Association]:
        """PBS has no accounts a user must belong to: none (``-A`` is a free label)."""
        return []

    async def account_limits(self) -> list[TresMinutesLimit]:
        """PBS has no limit on resource minutes per account: none."""
        return []

    async def ping(self) -> ClusterStatus:
        """Ask pbs_server for its status."""
        started = time.perf_counter()
        try:
            result = await self.ssh.run(commands.server_argv())
        except SchedulerUnavailable as exc:
            return ClusterStatus(False, str(exc))
        detail = (result.stderr or "").strip() or "pbs_server answers"
        latency = (time.perf_counter() - started) * 1000
        return ClusterStatus(result.exit_status == 0, detail, latency)

    async def close(self) -> None:
        """Close tunnels and SSH connections."""
        if self.tunnels is not None:
            await self.tunnels.close()
        await self.ssh.close()


def queue_problems(spec: JobSpec, queues: list[PartitionInfo]) -> list[tuple[str, str]]:
    """The spec's queue and walltime against the cluster's queues, in plain words."""
    by_name = {q.name: q for q in queues}
    chosen = spec.partition or next((q.name for q in queues if q.is_default), "")
    queue = by_name.get(chosen)
    if queue is None:
        names = ", ".join(sorted(by_name)) or "none"
        return [("partition", f"queue {chosen} does not exist (this cluster has: {names})")]
    minutes = spec.time_limit_minutes
    limit = queue.max_time
    if minutes is None or limit is None or minutes * 60 <= limit.total_seconds():
        return []
    shown = commands.format_walltime(int(limit.total_seconds()) // 60)
    return [("time_limit", f"queue {chosen} allows at most {shown}")]


def script_problems(script: str, status: str) -> list[tuple[str, str]]:
    """The script's own #PBS lines that qsub would refuse, or that ask for a queue or CPUs the
    cluster does not have (``status`` is ``status_argv``'s answer), each with its line."""
    read = read_pbs_directives(script)
    found = [
        *read.errors,
        *check_against_cluster(
            read, parsing.parse_queues(status), parsing.parse_status_nodes(status)
        ),
    ]
    return [("script", f"line {p.line}: {p.text.strip()}: {p.message}") for p in found]


def _needed_folders(spec: JobSpec, user: str) -> dict[str, str]:
    """Folders the logs and working directory need (a folder naming the job id cannot be
    made before qsub answers, and PBS makes none: it is left out, and the job's output is
    then kept in PBS's undelivered folder)."""
    wanted: dict[str, str] = {}
    for field, path in (("stdout", spec.stdout), ("stderr", spec.stderr)):
        if path is not None:
            folder = posixpath.dirname(commands.output_path(path, spec.name, user))
            wanted.setdefault(folder, field)
    if spec.working_dir is not None:
        wanted.setdefault(spec.working_dir, "working_dir")
    return {d: f for d, f in wanted.items() if "%" not in d and "^" not in d}
