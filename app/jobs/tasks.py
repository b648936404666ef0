"""The tasks of a job array: one page of them, their counts, and a retry of the failed ones.

Task rows are written by the poller from what Slurm reports for each index; the array's own
row is the parent. "Retry failed tasks" submits the array again with exactly the indices
that did not complete (keeping its ``%`` limit), as a new job that records which job it
retries.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from itertools import pairwise

from sqlalchemy.ext.asyncio import AsyncSession

from app.errors import Conflict, NotFound, ValidationFailed
from app.i18n import _
from app.jobs import authz, repository
from app.jobs.states import TERMINAL_STATES
from app.models.jobs import Job
from app.users.actor import Actor
from app.vocabulary.job_states import JobStateName

TASK_PAGE_SIZE = 200
# Ended without completing: what a retry runs again.
RETRIED_STATES = frozenset(TERMINAL_STATES - {JobStateName.COMPLETED, JobStateName.SUBMIT_FAILED})


@dataclass(frozen=True, slots=True)
class TaskRollup:
    """What an array's tasks used, together. None where no task has told yet.

    The time limit, CPUs and memory an array asks for are per task, so the longest task is
    what meets the time limit and the largest RSS what meets the memory request; CPU
    efficiency is the ended tasks' CPU time over their elapsed time on their CPUs.
    """

    longest_seconds: int | None = None
    ended_seconds: int | None = None
    cpu_seconds: int | None = None
    max_rss_bytes: int | None = None
    cpus_per_task: int | None = None
    memory_per_task_mb: int | None = None

    @property
    def cpu_efficiency(self) -> float | None:
        """Percent of the ended tasks' CPU capacity they used."""
        if self.cpu_seconds is None or not self.ended_seconds or not self.cpus_per_task:
            return None
        return round(100 * self.cpu_seconds / (self.ended_seconds * self.cpus_per_task), 1)


@dataclass(frozen=True, slots=True)
class TaskPage:
    """Some of an array's tasks, in index order, with the counts and usage of all of them."""

    array: Job
    tasks: list[Job]
    counts: dict[str, int] = field(default_factory=dict)
    next_after: int | None = None
    rollup: TaskRollup = field(default_factory=TaskRollup)

    @property
    def total(self) -> int:
        return sum(self.counts.values())


async def visible_array(session: AsyncSession, actor: Actor, job_id: int) -> Job:
    """The array job ``job_id``; NotFound when it is not one the actor can see."""
    job = await authz.get_visible_job(session, actor, job_id)
    if job.array_spec is None or job.array_parent_id is not None:
        raise NotFound(_("This job is not a job array."))
    return job


async def task_page(
    session: AsyncSession,
    actor: Actor,
    job_id: int,
    states: Iterable[str] = (),
    after_index: int | None = None,
    limit: int = TASK_PAGE_SIZE,
) -> TaskPage:
    array = await visible_array(session, actor, job_id)
    found = await repository.list_array_tasks(
        session, array.id, tuple(states), after_index, limit + 1
    )
    counts = await repository.count_array_tasks(session, array.id)
    more = len(found) > limit
    tasks = found[:limit]
    after = tasks[-1].array_task_id if more and tasks else None
    return TaskPage(array, tasks, counts, after, await rollup(session, array))


async def rollup(session: AsyncSession, array: Job) -> TaskRollup:
    """The usage of all of ``array``'s tasks, in one query."""
    longest, ended, cpu, rss, cpus, memory = await repository.sum_array_tasks(session, array.id)
    return TaskRollup(longest, ended, cpu, rss, cpus or array.cpus, array.memory_mb or memory)


def index_spec(indices: Iterable[int], throttle: str | None = None) -> str:
    """``[1, 2, 3, 7]`` → ``1-3,7`` (with ``%N`` when the array had a limit)."""
    ordered = sorted(set(indices))
    parts: list[str] = []
    start = previous = ordered[0]
    for index in [*ordered[1:], None]:
        if index is not None and index == previous + 1:
            previous = index
            continue
        parts.append(str(start) if start == previous else f"{start}-{previous}")
        if index is not None:
            start = previous = index
    return ",".join(parts) + (f"%{throttle}" if throttle else "")


def stepped_spec(indices: Iterable[int], throttle: str | None = None) -> str:
    """``[3, 5, 7]`` → ``3-7:2``, ``[4]`` → ``4-5:2``: one range with a step, the only array
    some schedulers take (PBS's ``-J X-Y[:Z]``, two numbers at least). ValidationFailed when
    the indices are not evenly spaced."""
    ordered = sorted(set(indices))
    steps = {b - a for a, b in pairwise(ordered)}
    if len(steps) > 1:
        shown = ", ".join(str(i) for i in ordered)
        raise ValidationFailed(
            _(
                "This cluster runs an array's tasks as one evenly spaced range, and tasks "
                "%(tasks)s are not: resubmit the array with the ones to run.",
                tasks=shown,
            )
        )
    step = steps.pop() if steps else 2
    last = ordered[-1] if len(ordered) > 1 else ordered[0] + 1
    spec = f"{ordered[0]}-{last}" + (f":{step}" if step != 1 else "")
    return spec + (f"%{throttle}" if throttle else "")


async def failed_task_spec(session: AsyncSession, array: Job, *, stepped: bool = False) -> str:
    """The array spec that runs ``array``'s failed tasks again; Conflict when there are none.

    ``stepped``: as one range with a step (the only kind of array on a PBS cluster)."""
    tasks = await repository.list_array_tasks(session, array.id, tuple(sorted(RETRIED_STATES)))
    indices = [t.array_task_id for t in tasks if t.array_task_id is not None]
    if not indices:
        raise Conflict(_("No task of this array failed, so there is nothing to retry."))
    throttle = (array.array_spec or "").partition("%")[2] or None
    return (stepped_spec if stepped else index_spec)(indices, throttle)
