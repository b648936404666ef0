"""Jobs the portal's users submitted outside it: plain ``sbatch`` on a login node.

They are found in the queue snapshot the cycle reads anyway, so they cost no scheduler call:
a job whose Slurm user is mapped to a portal user on this cluster, whose account is a
project's, and which the portal does not know yet becomes a row marked ``submitted_outside``.
From then on the normal reconciliation tracks it to its true end state. A job that already
ended between two cycles is still in the queue for a while (MinJobAge) without its exit
code; it is recorded as completing, and the next cycle reads its end from accounting.

An array is recorded as one parent row whose task set is what the queue shows of it (the
tasks already created plus the pending remainder); the reconciliation then adds a row per
task, as for an array submitted through the portal. Nothing here touches the database or
the network.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace

from app.jobs.tasks import index_spec
from app.poller.arrays import task_ranges
from app.poller.rules import TrackedJob, is_task_record
from app.scheduler.types import JobInfo

# The width of the jobs table's ``array_spec`` column.
MAX_SPEC_LENGTH = 255


@dataclass(frozen=True, slots=True)
class Directory:
    """Who and what on one cluster the portal knows: usernames and accounts."""

    user_ids: Mapping[str, int] = field(default_factory=dict)
    """Cluster username → portal user id."""
    project_ids: Mapping[str, int] = field(default_factory=dict)
    """Slurm account → project id."""


@dataclass(frozen=True, slots=True)
class OutsideJob:
    """A queue record to record as a new row, with whose it is and what it charges."""

    info: JobInfo
    owner_user_id: int
    project_id: int
    array_records: tuple[JobInfo, ...] = ()
    """For an array: every queue record of it; ``info`` then stands for the whole array."""
    array_spec: str | None = None


def outside_jobs(
    queue: Iterable[JobInfo], tracked: Sequence[TrackedJob], directory: Directory
) -> list[OutsideJob]:
    """Queue records of mapped users that no tracked row accounts for, an array as one."""
    # Known ids are set aside first: at a large site nearly every record is, 100,000 a cycle.
    known_ids = {job.slurm_job_id for job in tracked if job.slurm_job_id}
    arrays: dict[str, list[JobInfo]] = {}
    candidates: list[tuple[JobInfo, tuple[JobInfo, ...]]] = []
    for info in queue:
        if info.array_job_id is not None:
            arrays.setdefault(info.array_job_id, []).append(info)
        elif info.job_id not in known_ids:
            candidates.append((info, ()))
    candidates += [
        (array_info(array_id, group), tuple(group))
        for array_id, group in arrays.items()
        if array_id not in known_ids
    ]
    if not candidates:
        return []
    known_uuids = {job.uuid for job in tracked}
    found = []
    for info, records in candidates:
        if any(r.comment in known_uuids for r in records or (info,)):
            continue
        owner = directory.user_ids.get(info.user or "")
        project = directory.project_ids.get(info.account or "")
        if owner is not None and project is not None:
            spec = array_spec_of(records) if records else None
            found.append(OutsideJob(info, owner, project, records, spec))
    return found


def array_info(array_id: str, records: Sequence[JobInfo]) -> JobInfo:
    """One record standing for a whole array: its id, name, owner and earliest submit.

    Only the pending rest of an array still has its log paths as patterns (each task's are
    filled in); without one, each task row gets its own path from its own record.
    """
    first = min(records, key=lambda r: (r.submit_time is None, r.submit_time, r.job_id))
    rest = next((r for r in records if not is_task_record(r)), None)
    return replace(
        first,
        job_id=array_id,
        raw_job_id=array_id,
        array_job_id=None,
        array_task_id=None,
        exit_code=None,
        signal=None,
        stdout_path=None if rest is None else rest.stdout_path,
        stderr_path=None if rest is None else rest.stderr_path,
    )


def array_spec_of(records: Iterable[JobInfo]) -> str:
    """The task set the queue shows: created tasks and the pending remainder (``1,2,5-9%2``).

    Ranges are never expanded (an array may hold a million tasks); a set too long for the
    column is given by its bounds.
    """
    created: list[int] = []
    pending: list[str] = []
    throttle = ""
    for info in records:
        if is_task_record(info):
            created.append(int(info.array_task_id or 0))
            continue
        body, _, limit = (info.array_task_id or "").strip("[]").partition("%")
        throttle = throttle or limit
        pending.append(body)
    pieces = [index_spec(created)] if created else []
    text = ",".join(pieces + pending)
    if len(text) > MAX_SPEC_LENGTH - 12:
        bounds = [i for body in pending for r in task_ranges(body) for i in r[:2]] + created
        text = f"{min(bounds)}-{max(bounds)}" if bounds else ""
    return f"{text}%{throttle}" if throttle else text


def not_recorded(candidates: Sequence[OutsideJob], recorded: Collection[str]) -> list[OutsideJob]:
    """Candidates whose Slurm id no row holds (ended rows are not tracked, but still known)."""
    return [c for c in candidates if c.info.job_id not in recorded]
