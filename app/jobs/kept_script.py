"""The script of a job submitted outside the portal, from where Slurm keeps it.

The portal has its own copy of every script it submitted. For a job found in the queue
(plain ``sbatch`` on a login node) it asks slurmctld, as the job's owner, the first time
someone who may see the job looks, and keeps the answer: Slurm forgets the script once the
job leaves its memory. The database session is closed while the cluster is asked.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from sqlalchemy import or_, update
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.db import unit_of_work
from app.errors import ServiceUnavailable
from app.i18n import _
from app.jobs import authz, repository
from app.jobs.service import AdapterLookup
from app.models.jobs import Job
from app.scheduler.errors import SchedulerUnavailable
from app.users.actor import Actor

ScriptSource = Literal["portal", "slurm", "gone"]
# Slurm's own limit on a batch script is 4 MB; a larger answer is not one.
MAX_SCRIPT_BYTES = 4 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class JobScript:
    """A job's script and where it came from; ``gone`` when Slurm no longer has it."""

    text: str
    source: ScriptSource


@dataclass(frozen=True, slots=True)
class _Wanted:
    job_ids: tuple[int, ...]
    """The row asked about, and the array's row for a task: both keep the answer."""
    cluster: str
    slurm_id: str
    owner: str


async def _what_to_ask(session: AsyncSession, actor: Actor, job_id: int) -> JobScript | _Wanted:
    job = await authz.get_visible_job(session, actor, job_id)
    if not job.submitted_outside:
        return JobScript(job.script, "portal")
    if job.script:
        return JobScript(job.script, "slurm")
    parent = None
    if job.array_parent_id is not None:
        parent = await repository.get_by_id(session, job.array_parent_id)
        if parent is not None and parent.script:
            return JobScript(parent.script, "slurm")
    owner = await repository.get_cluster_username(session, job.owner_user_id, job.cluster)
    if owner is None or not job.slurm_job_id:
        return JobScript("", "gone")
    ids = (job.id,) if parent is None else (job.id, parent.id)
    return _Wanted(ids, job.cluster, job.slurm_job_id, owner)


async def job_script(
    sessionmaker: async_sessionmaker[AsyncSession],
    adapters: AdapterLookup,
    actor: Actor,
    job_id: int,
) -> JobScript:
    """The script of a job the actor may see; NotFound otherwise."""
    async with sessionmaker() as session:
        found = await _what_to_ask(session, actor, job_id)
    if isinstance(found, JobScript):
        return found
    try:
        text = await adapters.get(found.cluster).batch_script(found.slurm_id, found.owner)
    except SchedulerUnavailable as exc:
        raise ServiceUnavailable(_("The cluster did not answer; try again shortly.")) from exc
    if not text or len(text.encode()) > MAX_SCRIPT_BYTES:
        return JobScript("", "gone")
    async with unit_of_work(sessionmaker) as session:
        await session.execute(
            update(Job)
            .where(Job.id.in_(found.job_ids), or_(Job.script == "", Job.script.is_(None)))
            .values(script=text)
        )
    return JobScript(text, "slurm")
