"""LsfAdapter: the scheduler interface on LSF's commands (OpenLava 2.2 and later), over SSH.

Submissions and job actions run as the user, with the user's own certificate, as on Slurm;
listings run as the service identity: one ``bjobs -l -a -u all`` per poll cycle (unfinished
and recently finished jobs), and one batched ``bhist -l`` for why the jobs the poller saw end
ended (a cancel is only in the history). What LSF does not offer is said in CAPABILITIES.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Sequence
from datetime import UTC, datetime

from app.scheduler.base import follow_file
from app.scheduler.cache import TtlCache
from app.scheduler.capabilities import Capabilities
from app.scheduler.config import ClusterConfig
from app.scheduler.directives import DirectiveProblem
from app.scheduler.disk_usage import FilesystemUsage
from app.scheduler.errors import (
    InvalidSpec,
    PreflightFailed,
    SchedulerUnavailable,
)
from app.scheduler.lsf import bjobs, commands, parsing
from app.scheduler.lsf.directives import LsfFacts, check_against, read_bsub_directives
from app.scheduler.lsf.errors import classify_bsub_error, classify_control_error, is_transient
from app.scheduler.lsf.nodes import parse_nodes_report
from app.scheduler.nodes import NodesReport
from app.scheduler.slurm import commands as shell
from app.scheduler.slurm.login_node import disk_usage_as, read_log_chunk
from app.scheduler.slurm.preflight_checks import needed_folders, unmade_folders
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
    scheduler="lsf",
    # bjobs prints no expected start time (LSF's bjobs -l shows one only for reserved slots).
    expected_start=False,
    rest_api=False,
    # bsub has no --test-only: preflight checks what the queues tell; bsub says the rest.
    test_submission=False,
    # A script read from bsub's input takes no arguments.
    script_arguments=False,
    # Projects (-P) are free names, not accounts users are members of.
    accounts=False,
    qos=False,
    gpus=False,
    reservations=False,
    batch_script=False,
    account_limits=False,
    memory_kill_reported=False,
    partition_word="queue",
)
QUEUES_CACHE_SECONDS = 60.0


class LsfAdapter:
    """Implements SchedulerAdapter for one LSF (OpenLava) cluster."""

    capabilities = CAPABILITIES

    def __init__(
        self,
        config: ClusterConfig,
        ssh: SshTransport,
        *,
        queues_cache_seconds: float = QUEUES_CACHE_SECONDS,
    ) -> None:
        self.config = config
        self.ssh = ssh
        self.files = SftpFiles(ssh, config.browse_roots)
        self.tunnels = SshTunnels(ssh) if config.compute_access == "via_login" else None
        self._queue_reader = bjobs.BjobsReader()
        self._queues: TtlCache[str, tuple[list[PartitionInfo], dict[str, int]]] = TtlCache(
            queues_cache_seconds
        )

    async def submit(self, spec: JobSpec, as_user: str) -> str:
        """Make the job's folders and submit it with one command as ``as_user``; its id."""
        validate_spec(spec, self.config.log_roots)
        folders = needed_folders(spec, as_user)
        argv = commands.submit_argv(spec, as_user, list(folders))
        result = await self.ssh.run(argv, as_user=as_user, stdin=spec.script, repeatable=False)
        if folders and result.exit_status == shell.FOLDERS_REFUSED:
            raise PreflightFailed(unmade_folders(folders, result.text))
        job_id = parsing.submitted_job_id(result.text)
        if result.exit_status != 0 or job_id is None:
            said = (result.stderr + "\n" + result.text).strip()
            if is_transient(said):
                raise SchedulerUnavailable(f"bsub: {said}")
            raise classify_bsub_error(said)
        return job_id

    async def preflight(self, spec: JobSpec, as_user: str, *, ask_sbatch: bool = True) -> None:
        """Raise PreflightFailed listing what the queues refuse; make missing folders."""
        try:
            validate_spec(spec, self.config.log_roots)
            commands.bsub_argv(spec, as_user)
        except InvalidSpec as exc:
            raise PreflightFailed([(exc.field, exc.message)]) from exc
        # The script's own #BSUB lines first: they name the line to change.
        problems = [
            ("script", f"line {p.line}: {p.text.strip()}: {p.message}")
            for p in await self.script_problems(spec.script)
        ] or await self._queue_problems(spec)
        if ask_sbatch:
            problems += await self._make_folders(needed_folders(spec, as_user), as_user)
        if problems:
            raise PreflightFailed(problems)

    async def script_problems(self, script: str) -> list[DirectiveProblem]:
        """The script's ``#BSUB`` lines this cluster would refuse: each with its line, the
        valid choices and bsub's own words (the queues are asked at most once a minute)."""
        queues, most_cores = await self._queues.get("", self._read_queues)
        facts = LsfFacts(
            queues=[q.name for q in queues],
            default_queue=next((q.name for q in queues if q.is_default), ""),
            run_limits={
                q.name: int(q.max_time.total_seconds()) // 60 for q in queues if q.max_time
            },
            max_cores=most_cores,
        )
        return check_against(read_bsub_directives(script), facts)

    async def _queue_problems(self, spec: JobSpec) -> list[tuple[str, str]]:
        problems = self._queue_problems_in(spec, await self._queues.get("", self._read_queues))
        if problems:  # never refused on a stale answer
            self._queues.forget("")
            problems = self._queue_problems_in(spec, await self._queues.get("", self._read_queues))
        return problems

    @staticmethod
    def _queue_problems_in(
        spec: JobSpec, known: tuple[list[PartitionInfo], dict[str, int]]
    ) -> list[tuple[str, str]]:
        queues = {q.name: q for q in known[0]}
        chosen = spec.partition or next((q.name for q in queues.values() if q.is_default), "")
        queue = queues.get(chosen)
        if queue is None:
            names = ", ".join(sorted(queues)) or "none"
            return [("partition", f"queue {chosen} does not exist (this cluster has: {names})")]
        problems = []
        minutes = spec.time_limit_minutes
        limit = queue.max_time
        if minutes is not None and limit is not None and minutes * 60 > limit.total_seconds():
            most = int(limit.total_seconds()) // 60
            problems.append(("time_limit", f"queue {chosen} allows at most {most} minutes"))
        cores = (spec.ntasks or 1) * (spec.cpus_per_task or 1)
        most_cores = known[1].get(chosen)
        if most_cores is not None and cores > most_cores:
            problems.append(("ntasks", f"queue {chosen} allows at most {most_cores} cores"))
        return problems

    async def _read_queues(self) -> tuple[list[PartitionInfo], dict[str, int]]:
        queues, hosts = await asyncio.gather(
            self._listing(commands.bqueues_argv(), "bqueues"),
            self._listing(commands.bhosts_argv(), "bhosts"),
        )
        return parsing.parse_queues(queues, hosts), parsing.queue_process_limit(queues)

    async def _make_folders(self, folders: dict[str, str], user: str) -> list[tuple[str, str]]:
        if not folders:
            return []
        result = await self.ssh.run(shell.ensure_dirs_argv(list(folders)), as_user=user)
        return unmade_folders(folders, result.text)

    async def queue(self) -> list[JobInfo]:
        """Every unfinished and recently finished job, from one bjobs call, gathered past
        the transport's cap on a command's output: at about 830 bytes a job, 80,000 jobs
        pass its 64 MiB, and the poller must read the whole queue however long."""
        text = await self._listing(commands.bjobs_argv(), "bjobs", whole=True)
        return self._queue_reader.parse(text, datetime.now(UTC))

    async def accounting(
        self, job_ids: Sequence[str] | None = None, since: datetime | None = None
    ) -> list[JobInfo]:
        """The jobs' histories from one bhist call: how they ended, cancels included."""
        text = await self._listing(commands.bhist_argv(job_ids or ()), "bhist")
        jobs = bjobs.parse_history(text, datetime.now(UTC))
        if since is None:
            return jobs
        return [j for j in jobs if (j.end_time or j.submit_time or since) >= since]

    async def _listing(self, argv: list[str], name: str, *, whole: bool = False) -> str:
        """A listing's text; ``whole``: however long, not refused past the output cap."""
        parts: list[bytes] = []
        if whole:
            result = await self.ssh.stream(argv, parts.append)
        else:
            result = await self.ssh.run(argv)
            parts.append(result.stdout)
        # "No unfinished job found", "No matching job found", "Job <9> is not found": jobs
        # that are not there, not a cluster that does not answer.
        said = result.stderr.lower()
        if result.exit_status != 0 and "job found" not in said and "not found" not in said:
            raise SchedulerUnavailable(f"{name} failed: {result.stderr.strip()}")
        return b"".join(parts).decode("utf-8", "replace")

    async def cancel(self, job_ids: Sequence[str], as_user: str) -> None:
        """bkill as the user; PermissionDenied for other users' jobs."""
        await self._control(commands.bkill_argv(job_ids), as_user)

    async def hold(self, job_ids: Sequence[str], as_user: str) -> None:
        """bstop as the user: a pending job stays pending (PSUSP) until released."""
        await self._control(commands.bstop_argv(job_ids), as_user)

    async def release(self, job_ids: Sequence[str], as_user: str) -> None:
        """bresume as the user."""
        await self._control(commands.bresume_argv(job_ids), as_user)

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
        """None: OpenLava gives no job's script back (bjobs shows it folded into one line)."""
        return None

    async def disk_usage(self, as_user: str) -> list[FilesystemUsage]:
        """The site's disk usage command, run as the user."""
        return await disk_usage_as(self.ssh, self.config, as_user)

    async def partitions(self) -> list[PartitionInfo]:
        """The queues, with their run limits and the hosts' slots."""
        self._queues.forget("")
        return (await self._queues.get("", self._read_queues))[0]

    async def reservations(self) -> list[Reservation]:
        """None: OpenLava 2.2 has no advance reservations."""
        return []

    async def nodes(self) -> NodesReport:
        """Every host with its slots, and the queues (open to every user here)."""
        hosts, queues = await asyncio.gather(
            self._listing(commands.bhosts_argv(), "bhosts"),
            self._listing(commands.bqueues_argv(), "bqueues"),
        )
        return parse_nodes_report(hosts, queues)

    async def associations(self, user: str) -> list[Association]:
        """None: LSF projects are free names, not memberships."""
        return []

    async def account_limits(self) -> list[TresMinutesLimit]:
        """None: OpenLava keeps no limits on resource minutes."""
        return []

    async def ping(self) -> ClusterStatus:
        """Ask mbatchd for its parameters (lsid would only reach lim)."""
        started = time.perf_counter()
        try:
            result = await self.ssh.run(["bparams"])
        except SchedulerUnavailable as exc:
            return ClusterStatus(False, str(exc))
        is_up = result.exit_status == 0 and "default queue" in result.text.lower()
        detail = (result.text or result.stderr).strip().splitlines()
        return ClusterStatus(
            is_up, detail[0] if detail else "", (time.perf_counter() - started) * 1000
        )

    async def close(self) -> None:
        """Close tunnels and SSH connections."""
        if self.tunnels is not None:
            await self.tunnels.close()
        await self.ssh.close()
