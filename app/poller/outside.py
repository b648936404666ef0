"""Jobs the portal's users submitted outside it: plain ``sbatch`` on a login node.

They are found in the queue snapshot the cycle reads anyway, so they cost no scheduler call:
a job whose Slurm user is mapped to a portal user on this cluster, whose account is a
project's, and which the portal does not know yet becomes a row marked ``submitted_outside``.
From then on the normal reconciliation tracks it to its true end state. A job that already
ended between two cycles is still in the queue for a while (MinJobAge) without its exit
code; it is recorded as completing, and the next cycle reads its end from accounting.

Array jobs are left to the cluster's own tools for now: their tasks appear in the queue one
by one and need the array's spec to be grouped. Nothing here touches the database or the
network.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from app.poller.rules import TrackedJob
from app.scheduler.types import JobInfo


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


def outside_jobs(
    queue: Iterable[JobInfo], tracked: Sequence[TrackedJob], directory: Directory
) -> list[OutsideJob]:
    """Non-array queue records of mapped users that no tracked row accounts for."""
    known_ids = {job.slurm_job_id for job in tracked if job.slurm_job_id}
    known_uuids = {job.uuid for job in tracked}
    found = []
    for info in queue:
        if info.array_job_id is not None:
            continue
        if info.job_id in known_ids or (info.comment or "") in known_uuids:
            continue
        owner = directory.user_ids.get(info.user or "")
        project = directory.project_ids.get(info.account or "")
        if owner is not None and project is not None:
            found.append(OutsideJob(info, owner, project))
    return found


def not_recorded(candidates: Sequence[OutsideJob], recorded: Collection[str]) -> list[OutsideJob]:
    """Candidates whose Slurm id no row holds (ended rows are not tracked, but still known)."""
    return [c for c in candidates if c.info.job_id not in recorded]
