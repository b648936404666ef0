"""Submitting a workflow's steps in order, each waiting for the steps before it."""

from __future__ import annotations

import contextlib
import dataclasses

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.audit.service import SYSTEM, Origin
from app.db import unit_of_work
from app.errors import Conflict
from app.jobs.dependencies import After
from app.jobs.service import JobService
from app.models.jobs import Job
from app.models.workflows import WorkflowRun, WorkflowRunJob
from app.users.actor import Actor
from app.vocabulary.job_states import JobStateName
from app.workflows.graph import Step
from app.workflows.service import RunPlan


class WorkflowRunner:
    """Runs and re-runs workflows through the jobs service; build one at start-up."""

    def __init__(self, sessionmaker: async_sessionmaker[AsyncSession], jobs: JobService) -> None:
        self._sessionmaker = sessionmaker
        self._jobs = jobs

    async def start(self, actor: Actor, plan: RunPlan, *, origin: Origin = SYSTEM) -> int:
        """Submit the plan's steps in order; returns the run's id.

        A step the cluster refuses stops the run there: what was submitted stays recorded,
        and a re-run submits the rest.
        """
        run_id = plan.run_id or await self._new_run(actor, plan.workflow_id)
        for job_id in plan.to_cancel:
            with contextlib.suppress(Conflict):  # it ended meanwhile: nothing to cancel
                await self._jobs.cancel(actor, job_id, origin=origin)
        submitted: dict[str, Job] = {}
        for step in plan.steps:
            after = self._after(step, submitted, plan.kept)
            request = dataclasses.replace(plan.requests[step.name], after=after)
            job = await self._jobs.submit(actor, request, origin=origin)
            submitted[step.name] = job
            await self._link(run_id, step.name, job.id)
        return run_id

    @staticmethod
    def _after(step: Step, submitted: dict[str, Job], kept: dict[str, Job]) -> tuple[After, ...]:
        # A kept step that succeeded is not waited for: its job may have left Slurm's memory,
        # and sbatch refuses a dependency on a job it no longer knows.
        ids = [
            (submitted.get(name) or kept[name]).id
            for name in step.after
            if name in submitted or kept[name].state != JobStateName.COMPLETED
        ]
        return (After(step.kind, tuple(ids)),) if ids else ()

    async def _new_run(self, actor: Actor, workflow_id: int) -> int:
        async with unit_of_work(self._sessionmaker) as session:
            run = WorkflowRun(workflow_id=workflow_id, owner_user_id=actor.user_id)
            session.add(run)
            await session.flush()
            return run.id

    async def _link(self, run_id: int, step: str, job_id: int) -> None:
        async with unit_of_work(self._sessionmaker) as session:
            last = await session.scalar(
                select(func.max(WorkflowRunJob.attempt)).where(
                    WorkflowRunJob.run_id == run_id, WorkflowRunJob.step == step
                )
            )
            session.add(
                WorkflowRunJob(run_id=run_id, step=step, job_id=job_id, attempt=(last or 0) + 1)
            )
