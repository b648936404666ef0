"""Saving, sharing and reading workflows, and planning what a run or a re-run submits.

Reads and plans take the request's session. Submitting is the runner's (runner.py): it calls
the jobs service step by step, which opens its own short sessions around each cluster call.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from sqlalchemy import ColumnElement, or_, select, true
from sqlalchemy.ext.asyncio import AsyncSession

from app.errors import Forbidden, NotFound
from app.i18n import _
from app.jobs import states
from app.jobs.requests import JobRequest
from app.jobs.waiting import NEVER_SATISFIED
from app.models.jobs import Job
from app.models.workflows import Workflow, WorkflowRun, WorkflowRunJob
from app.projects import service as projects
from app.submissions.service import (
    ContextFor,
    ScriptSubmission,
    Submission,
    TemplateSubmission,
    build_request,
)
from app.users.actor import Actor
from app.vocabulary.job_states import JobStateName
from app.workflows.graph import Step, levels, ordered, to_run_again


@dataclass(frozen=True, slots=True)
class WorkflowDraft:
    project_id: int
    name: str
    steps: tuple[Step, ...]
    is_shared: bool = False


async def create(session: AsyncSession, actor: Actor, draft: WorkflowDraft) -> Workflow:
    """Save a workflow in a project the actor belongs to; ValidationFailed for a bad graph."""
    project = (await projects.get(session, actor, draft.project_id)).project
    ordered(draft.steps)
    workflow = Workflow(
        project_id=project.id,
        owner_user_id=actor.user_id,
        name=draft.name.strip()[:200] or _("workflow"),
        steps=[step.as_json() for step in draft.steps],
        is_shared=draft.is_shared,
    )
    session.add(workflow)
    await session.flush()
    return workflow


def _visible(actor: Actor) -> ColumnElement[bool]:
    mine = Workflow.owner_user_id == actor.user_id
    if actor.is_site_admin:
        return true()
    shared = Workflow.is_shared.is_(True) & Workflow.project_id.in_(list(actor.project_roles))
    return or_(mine, shared)


async def list_visible(session: AsyncSession, actor: Actor) -> list[Workflow]:
    """The actor's own workflows and those shared in their projects, newest first."""
    query = select(Workflow).where(_visible(actor)).order_by(Workflow.id.desc()).limit(200)
    return list(await session.scalars(query))


async def get_visible(session: AsyncSession, actor: Actor, workflow_id: int) -> Workflow:
    query = select(Workflow).where(Workflow.id == workflow_id, _visible(actor))
    workflow = await session.scalar(query)
    if workflow is None:
        raise NotFound(_("No such workflow, or it is not shared with you."))
    return workflow


def steps_of(workflow: Workflow) -> list[Step]:
    return [Step.of(stored) for stored in workflow.steps]


@dataclass(frozen=True, slots=True)
class StepView:
    step: Step
    level: int
    job: Job | None
    attempts: int

    @property
    def state(self) -> str | None:
        return self.job.state if self.job else None


@dataclass(frozen=True, slots=True)
class RunView:
    run: WorkflowRun
    workflow: Workflow
    steps: list[StepView]

    @property
    def can_run_again(self) -> bool:
        return any(
            view.job is None or (is_done(view.job) and view.state != JobStateName.COMPLETED)
            for view in self.steps
        )


def is_done(job: Job) -> bool:
    return states.is_terminal(job.state)


async def _latest_jobs(session: AsyncSession, run_id: int) -> dict[str, tuple[Job, int]]:
    rows = await session.execute(
        select(WorkflowRunJob, Job)
        .join(Job, Job.id == WorkflowRunJob.job_id)
        .where(WorkflowRunJob.run_id == run_id)
        .order_by(WorkflowRunJob.attempt)
    )
    return {link.step: (job, link.attempt) for link, job in rows.all()}


async def get_run(session: AsyncSession, actor: Actor, run_id: int) -> RunView:
    """A run with each step's latest job; visible with its workflow."""
    run = await session.get(WorkflowRun, run_id)
    if run is None:
        raise NotFound(_("No such workflow run."))
    workflow = await get_visible(session, actor, run.workflow_id)
    if run.owner_user_id != actor.user_id and not actor.is_member_of(workflow.project_id):
        raise NotFound(_("No such workflow run."))
    steps = steps_of(workflow)
    depth = levels(steps)
    latest = await _latest_jobs(session, run.id)
    views = [
        StepView(step, depth[step.name], *latest.get(step.name, (None, 0)))
        for step in ordered(steps)
    ]
    return RunView(run, workflow, views)


async def list_runs(session: AsyncSession, workflow: Workflow, actor: Actor) -> list[WorkflowRun]:
    query = select(WorkflowRun).where(WorkflowRun.workflow_id == workflow.id)
    if not actor.is_member_of(workflow.project_id) and not actor.is_site_admin:
        query = query.where(WorkflowRun.owner_user_id == actor.user_id)
    return list(await session.scalars(query.order_by(WorkflowRun.id.desc()).limit(50)))


@dataclass(frozen=True, slots=True)
class RunPlan:
    """What a run submits (in order, with each step's request) and the jobs it keeps."""

    workflow_id: int
    steps: list[Step]
    requests: dict[str, JobRequest]
    run_id: int | None = None
    kept: dict[str, Job] = field(default_factory=dict)
    """Steps not submitted again, with their job (succeeded, or still queued or running)."""
    to_cancel: list[int] = field(default_factory=list)
    """Queued jobs of steps submitted again: they wait for a job that will not succeed."""


def _submission(step: Step, project_id: int) -> Submission:
    if step.script is not None:
        return ScriptSubmission(step.script, project_id, step.args, script_name=step.name)
    assert step.template_id is not None
    return TemplateSubmission(step.template_id, step.parameters, project_id=project_id)


async def _requests(
    session: AsyncSession,
    actor: Actor,
    workflow: Workflow,
    steps: Sequence[Step],
    context_for: ContextFor,
) -> dict[str, JobRequest]:
    return {
        step.name: await build_request(
            session, actor, _submission(step, workflow.project_id), context_for
        )
        for step in steps
    }


async def plan_run(
    session: AsyncSession, actor: Actor, workflow_id: int, context_for: ContextFor
) -> RunPlan:
    """Every step's request, checked before anything is submitted."""
    workflow = await get_visible(session, actor, workflow_id)
    steps = ordered(steps_of(workflow))
    requests = await _requests(session, actor, workflow, steps, context_for)
    return RunPlan(workflow.id, steps, requests)


async def plan_rerun(
    session: AsyncSession, actor: Actor, run_id: int, context_for: ContextFor
) -> RunPlan:
    """The steps that did not succeed, and those after them; the rest is kept as it is."""
    view = await get_run(session, actor, run_id)
    if view.run.owner_user_id != actor.user_id:
        raise Forbidden(_("Only the person who started this run can run it again."))
    succeeded = {v.step.name for v in view.steps if v.state == JobStateName.COMPLETED}
    active = {v.step.name for v in view.steps if v.job is not None and not is_done(v.job)}
    again = set(to_run_again([v.step for v in view.steps], succeeded, active))
    steps = [v.step for v in view.steps if v.step.name in again]
    kept = {v.step.name: v.job for v in view.steps if v.job and v.step.name not in again}
    cancel = [v.job.id for v in view.steps if v.step.name in again and v.job and not is_done(v.job)]
    requests = await _requests(session, actor, view.workflow, steps, context_for)
    return RunPlan(view.workflow.id, steps, requests, view.run.id, kept, cancel)


def why_stuck(job: Job | None) -> bool:
    return job is not None and job.reason == NEVER_SATISFIED and not is_done(job)
