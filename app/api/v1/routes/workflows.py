from __future__ import annotations

from fastapi import APIRouter, status
from sqlalchemy.ext.asyncio import AsyncSession

from app.api.v1.deps import OriginDep, Reader, Submitter
from app.api.v1.params import PathId
from app.api.v1.schemas import errors
from app.api.v1.workflow_schemas import (
    RunOut,
    StepIn,
    StepStateOut,
    WorkflowIn,
    WorkflowOut,
)
from app.deps import SessionDep, SubmitChoicesDep, WorkflowRunnerDep
from app.jobs.waiting import stuck
from app.models.workflows import Workflow
from app.submissions.choices import SubmitChoices
from app.submissions.service import ContextFor
from app.users.actor import Actor
from app.workflows import service as workflows
from app.workflows.graph import Step
from app.workflows.service import RunView

router = APIRouter(prefix="/workflows", tags=["workflows"])


def workflow_out(workflow: Workflow) -> WorkflowOut:
    return WorkflowOut(
        id=workflow.id,
        project_id=workflow.project_id,
        owner_user_id=workflow.owner_user_id,
        name=workflow.name,
        is_shared=workflow.is_shared,
        steps=[StepIn.model_validate(stored) for stored in workflow.steps],
        created_at=workflow.created_at,
    )


def run_out(view: RunView) -> RunOut:
    steps = []
    for step in view.steps:
        blocked = stuck(step.job) if step.job else None
        steps.append(
            StepStateOut(
                name=step.step.name,
                after=list(step.step.after),
                kind=step.step.kind,
                level=step.level,
                job_id=step.job.id if step.job else None,
                slurm_job_id=step.job.slurm_job_id if step.job else None,
                state=step.state,
                attempts=step.attempts,
                waiting_explanation=blocked.explanation if blocked else None,
            )
        )
    run = view.run
    return RunOut(
        id=run.id,
        workflow_id=run.workflow_id,
        owner_user_id=run.owner_user_id,
        created_at=run.created_at,
        can_run_again=view.can_run_again,
        steps=steps,
    )


def draft_of(body: WorkflowIn) -> workflows.WorkflowDraft:
    steps = tuple(
        Step(
            name=step.name,
            script=step.script,
            args=tuple(step.args),
            template_id=step.template_id,
            parameters=step.parameters,
            after=tuple(step.after),
            kind=step.kind,
        )
        for step in body.steps
    )
    return workflows.WorkflowDraft(body.project_id, body.name, steps, body.is_shared)


@router.post(
    "",
    response_model=WorkflowOut,
    status_code=status.HTTP_201_CREATED,
    summary="Save a workflow in one of your projects",
    responses=errors(404, 422),
)
async def create_workflow(
    session: SessionDep, principal: Submitter, body: WorkflowIn
) -> WorkflowOut:
    return workflow_out(await workflows.create(session, principal.actor, draft_of(body)))


@router.get(
    "", response_model=list[WorkflowOut], summary="Your workflows and those shared with you"
)
async def list_workflows(session: SessionDep, principal: Reader) -> list[WorkflowOut]:
    return [workflow_out(w) for w in await workflows.list_visible(session, principal.actor)]


@router.get(
    "/{workflow_id}", response_model=WorkflowOut, summary="One workflow", responses=errors(404)
)
async def get_workflow(session: SessionDep, principal: Reader, workflow_id: PathId) -> WorkflowOut:
    return workflow_out(await workflows.get_visible(session, principal.actor, workflow_id))


def _context(session: AsyncSession, actor: Actor, choices: SubmitChoices) -> ContextFor:
    return lambda project: choices.context_for(session, actor, project)


@router.post(
    "/{workflow_id}/runs",
    response_model=RunOut,
    status_code=status.HTTP_201_CREATED,
    summary="Submit every step, each waiting for the steps it comes after",
    responses=errors(404, 422, 503),
)
async def run_workflow(
    session: SessionDep,
    choices: SubmitChoicesDep,
    principal: Submitter,
    runner: WorkflowRunnerDep,
    origin: OriginDep,
    workflow_id: PathId,
) -> RunOut:
    actor = principal.actor
    plan = await workflows.plan_run(session, actor, workflow_id, _context(session, actor, choices))
    run_id = await runner.start(actor, plan, origin=origin)
    return run_out(await workflows.get_run(session, actor, run_id))


@router.get(
    "/runs/{run_id}",
    response_model=RunOut,
    summary="A run: each step's latest job and state",
    responses=errors(404),
)
async def get_run(session: SessionDep, principal: Reader, run_id: PathId) -> RunOut:
    return run_out(await workflows.get_run(session, principal.actor, run_id))


@router.post(
    "/runs/{run_id}/rerun",
    response_model=RunOut,
    summary="Submit again the steps that did not succeed and those after them",
    responses=errors(403, 404, 422, 503),
)
async def rerun_workflow(
    session: SessionDep,
    choices: SubmitChoicesDep,
    principal: Submitter,
    runner: WorkflowRunnerDep,
    origin: OriginDep,
    run_id: PathId,
) -> RunOut:
    actor = principal.actor
    plan = await workflows.plan_rerun(session, actor, run_id, _context(session, actor, choices))
    await runner.start(actor, plan, origin=origin)
    return run_out(await workflows.get_run(session, actor, run_id))
