"""An in-memory scheduler for fast tests of code that depends on SchedulerAdapter.

Jobs change state only when a test says so (``set_state``/``start``/``finish``), so
service tests can walk through every transition without a cluster. A job submitted with a
dependency waits with Slurm's reasons (``Dependency``, then ``None`` once satisfied or
``DependencyNeverSatisfied``) as the jobs it names end; it never starts by itself.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import AsyncIterator, Iterable, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from app.scheduler.base import follow_file
from app.scheduler.config import DEFAULT_LOG_ROOTS
from app.scheduler.dependencies import Verdict, parse_dependency, verdict
from app.scheduler.disk_usage import FilesystemUsage
from app.scheduler.errors import (
    DiskUsageNotConfigured,
    DiskUsageUnavailable,
    FileUnavailable,
    JobAlreadyEnded,
    JobNotFound,
    PermissionDenied,
    PreflightFailed,
    RejectKind,
    SchedulerUnavailable,
    SubmitRejected,
)
from app.scheduler.nodes import NodeInfo, NodesReport, NodeState, PartitionAccess
from app.scheduler.states import JobState
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
from app.scheduler.validation import resolve_log_path, validate_spec

_DEFAULT_PARTITION = PartitionInfo(
    name="debug",
    max_time=timedelta(hours=1),
    default_time=timedelta(minutes=10),
    is_default=True,
    state="up",
    total_nodes=1,
    idle_nodes=1,
    total_cpus=2,
    idle_cpus=2,
)

_DEFAULT_NODES = NodesReport(
    nodes=(
        NodeInfo(
            "node01",
            NodeState.IDLE,
            "IDLE",
            ("debug",),
            cpus_total=2,
            memory_mb_total=4096,
        ),
    ),
    partitions=(PartitionAccess("debug"),),
)


class FakeScheduler:
    """SchedulerAdapter held entirely in memory; see the module docstring."""

    def __init__(
        self,
        *,
        accounts: Mapping[str, Iterable[str]] | None = None,
        partitions: Sequence[PartitionInfo] = (_DEFAULT_PARTITION,),
        log_roots: Sequence[str] = DEFAULT_LOG_ROOTS,
        first_job_id: int = 1000,
        coordinators: Mapping[str, Iterable[str]] | None = None,
        keeps_ended_jobs: bool = False,
        disk_usages: Mapping[str, Sequence[FilesystemUsage]] | None = None,
    ) -> None:
        self.jobs: dict[str, JobInfo] = {}
        self.specs: dict[str, JobSpec] = {}
        self.files: dict[str, bytes] = {}
        self.is_up = True
        self.calls: list[str] = []
        self._accounts = {user: tuple(accts) for user, accts in (accounts or {}).items()}
        self._partitions = list(partitions)
        self._roots = tuple(log_roots)
        self._ids = itertools.count(first_job_id)
        # account -> users who coordinate it and so may act on its jobs, as in Slurm.
        self.coordinators = {a: set(users) for a, users in (coordinators or {}).items()}
        # slurmctld keeps ended jobs in the queue for MinJobAge, without their exit code.
        self.keeps_ended_jobs = keeps_ended_jobs
        # What ``reservations()`` answers; tests add maintenance windows here.
        self.reservation_list: list[Reservation] = []
        # user -> their filesystems; None: no disk usage command is configured.
        self.disk_usages = None if disk_usages is None else dict(disk_usages)
        # Set to make the disk usage command fail with this message (its stderr).
        self.disk_usage_failure: str | None = None
        # What ``nodes()`` reports; tests replace it.
        self.nodes_report = _DEFAULT_NODES
        # GrpTRESMins limits, as sacctmgr would list them.
        self.limits: list[TresMinutesLimit] = []

    def _check_up(self, call: str) -> None:
        self.calls.append(call)
        if not self.is_up:
            raise SchedulerUnavailable("fake scheduler is down")

    async def submit(self, spec: JobSpec, as_user: str) -> str:
        """Record the job as queued (or held) and return a new id."""
        self._check_up("submit")
        validate_spec(spec, self._roots)
        self._check_account(spec, as_user)
        self._check_dependency(spec)
        job_id = str(next(self._ids))
        state = JobState.QUEUED_HELD if spec.hold else JobState.QUEUED
        self.specs[job_id] = spec
        self.jobs[job_id] = JobInfo(
            job_id=job_id,
            state=state,
            native_state="PENDING",
            reason="JobHeldUser" if spec.hold else self._dependency_reason(spec) or "None",
            submit_time=datetime.now(UTC),
            user=as_user,
            account=spec.account,
            partition=spec.partition or self._partitions[0].name,
            name=spec.name,
            comment=spec.comment,
            work_dir=spec.working_dir,
            stdout_path=spec.stdout,
            stderr_path=spec.stderr or spec.stdout,
        )
        return job_id

    async def preflight(self, spec: JobSpec, as_user: str, *, ask_sbatch: bool = True) -> None:
        """Validate the spec and the account, as the real adapter would (it has no folders
        to make and no sbatch to ask, so ``ask_sbatch`` changes nothing)."""
        self._check_up("preflight")
        validate_spec(spec, self._roots)
        try:
            self._check_account(spec, as_user)
        except SubmitRejected as exc:
            raise PreflightFailed([("account", exc.message)]) from exc

    def _check_account(self, spec: JobSpec, user: str) -> None:
        allowed = self._accounts.get(user)
        if spec.account is not None and allowed is not None and spec.account not in allowed:
            raise SubmitRejected(
                RejectKind.INVALID_ACCOUNT,
                "The account does not exist or you are not a member of it.",
                spec.account,
            )

    def _check_dependency(self, spec: JobSpec) -> None:
        """sbatch refuses a dependency on a job slurmctld does not know."""
        for clause in parse_dependency(spec.dependency):
            if any(job_id not in self.jobs for job_id in clause.job_ids):
                raise SubmitRejected(
                    RejectKind.OTHER,
                    "Job dependency problem",
                    "sbatch: error: Job dependency problem",
                )

    def _dependency_reason(self, spec: JobSpec) -> str | None:
        if not spec.dependency:
            return None
        states = {job_id: job.state for job_id, job in self.jobs.items()}
        return {
            Verdict.WAITING: "Dependency",
            Verdict.NEVER: "DependencyNeverSatisfied",
            Verdict.SATISFIED: "None",
        }[verdict(parse_dependency(spec.dependency), states)]

    def set_state(self, job_id: str, state: JobState, **changes: Any) -> JobInfo:
        """Move a job to ``state`` (plus any other JobInfo fields) and return it; the jobs
        waiting on it get their new reason."""
        job = self._job(job_id)
        updated = dataclasses.replace(job, state=state, native_state=state.name, **changes)
        self.jobs[job_id] = updated
        if state.is_terminal:
            self._settle_dependents()
        return updated

    def _settle_dependents(self) -> None:
        for job_id, job in self.jobs.items():
            reason = self._dependency_reason(self.specs.get(job_id) or JobSpec(script=""))
            if job.state is JobState.QUEUED and reason is not None:
                self.jobs[job_id] = dataclasses.replace(job, reason=reason)

    def start(self, job_id: str) -> JobInfo:
        """Mark a job running now."""
        return self.set_state(job_id, JobState.RUNNING, start_time=datetime.now(UTC))

    def finish(self, job_id: str, exit_code: int = 0, signal: int | None = None) -> JobInfo:
        """Mark a job completed (exit 0) or failed (anything else)."""
        is_ok = exit_code == 0 and signal is None
        state = JobState.COMPLETED if is_ok else JobState.FAILED
        return self.set_state(
            job_id, state, exit_code=exit_code, signal=signal, end_time=datetime.now(UTC)
        )

    def _job(self, job_id: str) -> JobInfo:
        try:
            return self.jobs[job_id]
        except KeyError:
            raise JobNotFound(f"unknown job {job_id}") from None

    async def queue(self) -> list[JobInfo]:
        """Every job not yet in a terminal state, like slurmctld's memory (ended ones too, with
        no exit code, when ``keeps_ended_jobs``)."""
        self._check_up("queue")
        if self.keeps_ended_jobs:
            return [
                dataclasses.replace(job, exit_code=None, signal=None)
                if job.state.is_terminal
                else job
                for job in self.jobs.values()
            ]
        return [job for job in self.jobs.values() if not job.state.is_terminal]

    async def accounting(
        self, job_ids: Sequence[str] | None = None, since: datetime | None = None
    ) -> list[JobInfo]:
        """All recorded jobs, filtered by id (an array's id gives its tasks, as in sacct) or
        submit time."""
        self._check_up("accounting")
        jobs = list(self.jobs.values())
        if job_ids is not None:
            wanted = set(job_ids)
            jobs = [j for j in jobs if j.job_id in wanted or j.array_job_id in wanted]
        if since is not None:
            jobs = [job for job in jobs if job.submit_time and job.submit_time >= since]
        return jobs

    async def cancel(self, job_ids: Sequence[str], as_user: str) -> None:
        """Cancel the user's own jobs (or, for a coordinator, their account's); else refuse."""
        self._check_up("cancel")
        for job_id in job_ids:
            job = self._owned(job_id, as_user)
            if job.state.is_terminal:
                raise JobAlreadyEnded(f"job {job_id} has already ended")
            self.set_state(job_id, JobState.CANCELLED, end_time=datetime.now(UTC))

    async def hold(self, job_ids: Sequence[str], as_user: str) -> None:
        """Hold the user's own queued jobs."""
        self._check_up("hold")
        for job_id in job_ids:
            if self._owned(job_id, as_user).state is JobState.QUEUED:
                self.set_state(job_id, JobState.QUEUED_HELD, reason="JobHeldUser")

    async def release(self, job_ids: Sequence[str], as_user: str) -> None:
        """Release the user's own held jobs."""
        self._check_up("release")
        for job_id in job_ids:
            if self._owned(job_id, as_user).state is JobState.QUEUED_HELD:
                self.set_state(job_id, JobState.QUEUED, reason="None")

    def _owned(self, job_id: str, user: str) -> JobInfo:
        job = self._job(job_id)
        if job.user != user and user not in self.coordinators.get(job.account or "", ()):
            raise PermissionDenied(f"job {job_id} belongs to another user")
        return job

    async def read_file(self, path: str, offset: int, limit: int, as_user: str) -> FileChunk:
        """Read from ``files`` (tests put content there)."""
        self._check_up("read_file")
        clean = resolve_log_path(path, self._roots)
        if clean not in self.files:
            raise FileUnavailable(f"{clean} does not exist")
        content = self.files[clean]
        data = content[offset : offset + limit]
        end = offset + len(data)
        return FileChunk(data, offset, end, end >= len(content), len(content))

    def follow(
        self, path: str, as_user: str, *, offset: int = 0, interval: float = 1.0
    ) -> AsyncIterator[bytes]:
        """Yield bytes appended to a file in ``files``."""
        return follow_file(self, path, as_user, offset=offset, interval=interval)

    async def batch_script(self, job_id: str, as_user: str) -> str | None:
        """The script of a job submitted here, to its owner; None otherwise."""
        self._check_up("batch_script")
        array_id = job_id.partition("_")[0]
        job, spec = self.jobs.get(array_id), self.specs.get(array_id)
        if job is None or spec is None or job.user != as_user:
            return None
        return spec.script

    async def disk_usage(self, as_user: str) -> list[FilesystemUsage]:
        """The figures given for the user (none for users not given); a failure when a test
        set ``disk_usage_failure``."""
        self._check_up("disk_usage")
        if self.disk_usages is None:
            raise DiskUsageNotConfigured("no disk usage command for the fake cluster")
        if self.disk_usage_failure is not None:
            raise DiskUsageUnavailable(self.disk_usage_failure)
        return list(self.disk_usages.get(as_user, ()))

    async def partitions(self) -> list[PartitionInfo]:
        """The configured partitions."""
        self._check_up("partitions")
        return list(self._partitions)

    async def reservations(self) -> list[Reservation]:
        """The reservations a test put in ``self.reservation_list``."""
        self._check_up("reservations")
        return list(self.reservation_list)

    async def nodes(self) -> NodesReport:
        """``nodes_report`` as a test set it."""
        self._check_up("nodes")
        return self.nodes_report

    async def associations(self, user: str) -> list[Association]:
        """One association per configured account of the user."""
        self._check_up("associations")
        return [Association(account, None, ("normal",)) for account in self._accounts.get(user, ())]

    async def account_limits(self) -> list[TresMinutesLimit]:
        """The limits a test put in ``limits``."""
        self._check_up("account_limits")
        return list(self.limits)

    async def ping(self) -> ClusterStatus:
        """Up unless a test set ``is_up = False``."""
        return ClusterStatus(self.is_up, "fake", 0.0)

    async def close(self) -> None:
        """Nothing to release."""
