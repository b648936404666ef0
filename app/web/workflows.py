"""/workflows: save a graph of steps, run it, follow each step's state and re-run from a
failed step."""

from __future__ import annotations

import contextlib
from typing import Any

from fastapi import Request
from fastapi.responses import Response
from sqlalchemy.ext.asyncio import AsyncSession
from starlette.datastructures import FormData

from app.deps import SessionDep, SubmitChoicesDep, WorkflowRunnerDep
from app.errors import NotFound, ValidationFailed
from app.i18n import _
from app.job_templates import service as templates
from app.jobs.waiting import stuck
from app.models.job_templates import JobTemplate
from app.params import PathId
from app.projects import service as projects
from app.scheduler.dependencies import DependencyKind
from app.users.actor import Actor
from app.web.auth import CurrentUser, WebContext, WebContextDep, csrf_protected_router, web_origin
from app.web.jobs_fragments import state_badge
from app.web.views import page, redirect
from app.web.workflow_graph import render_run_graph
from app.workflows import service as workflows
from app.workflows.graph import MAX_STEPS, STEP_KINDS, Step

router = csrf_protected_router()
BLANK_STEPS = 3


def dependency_words() -> dict[DependencyKind, str]:
    """How a step waits, to follow "starts after them when they"."""
    return {
        DependencyKind.AFTER_OK: _("succeed"),
        DependencyKind.AFTER_ANY: _("end, however they end"),
        DependencyKind.AFTER_NOT_OK: _("fail"),
        DependencyKind.SINGLETON: _("end"),
    }


def _values(text: str) -> dict[str, str]:
    """A template's values typed one ``name=value`` a line."""
    pairs = (line.partition("=") for line in text.replace("\r\n", "\n").split("\n"))
    return {name.strip(): value.strip() for name, sep, value in pairs if sep and name.strip()}


def _step_from(form: FormData, index: int) -> Step | None:
    name = str(form.get(f"step-{index}-name", "")).strip()
    script = str(form.get(f"step-{index}-script", "")).replace("\r\n", "\n")
    template = str(form.get(f"step-{index}-template", ""))
    if not name and not script.strip() and not template:
        return None
    after = str(form.get(f"step-{index}-after", ""))
    kind = str(form.get(f"step-{index}-kind", DependencyKind.AFTER_OK))
    return Step(
        name=name,
        script=script if script.strip() else None,
        template_id=int(template) if template.isdigit() and len(template) < 12 else None,
        parameters=_values(str(form.get(f"step-{index}-values", ""))),
        after=tuple(word.strip() for word in after.split(",") if word.strip()),
        kind=DependencyKind(kind) if kind in STEP_KINDS else DependencyKind.AFTER_OK,
    )


def _steps_from(form: FormData) -> tuple[Step, ...]:
    found = (_step_from(form, index) for index in range(MAX_STEPS))
    return tuple(step for step in found if step is not None)


async def _list_page(
    request: Request,
    session: SessionDep,
    web: WebContext,
    actor: Actor,
    *,
    form: dict[str, Any] | None = None,
    errors: dict[str, str] | None = None,
    status_code: int = 200,
) -> Response:
    count = int(request.query_params.get("steps", BLANK_STEPS) or BLANK_STEPS)
    context = {
        "workflows": await workflows.list_visible(session, actor),
        "projects": await projects.list_for_actor(session, actor),
        "form": form or {},
        "errors": errors or {},
        "blank_steps": max(1, min(count, MAX_STEPS)),
        "kinds": STEP_KINDS,
        "dependency_words": dependency_words(),
        "templates": await _usable_templates(session, actor),
    }
    return page(request, web, "workflows/list.html", context, status_code=status_code)


async def _usable_templates(session: AsyncSession, actor: Actor) -> list[JobTemplate]:
    found: dict[int, JobTemplate] = {}
    for scope in ("projects", "mine", "site"):
        for template in await templates.list_templates(session, actor, scope):
            found.setdefault(template.id, template)
    return sorted(found.values(), key=lambda template: template.name)


async def _template_names(session: AsyncSession, actor: Actor, steps: list[Step]) -> dict[int, str]:
    names = {}
    for step in steps:
        if step.template_id is not None:
            with contextlib.suppress(NotFound):
                names[step.template_id] = (
                    await templates.get(session, actor, step.template_id)
                ).name
    return names


@router.get("/workflows", name="workflows")
async def workflows_page(
    request: Request, session: SessionDep, web: WebContextDep, actor: CurrentUser
) -> Response:
    return await _list_page(request, session, web, actor)


@router.post("/workflows", name="workflow_create")
async def create_workflow(
    request: Request, session: SessionDep, web: WebContextDep, actor: CurrentUser
) -> Response:
    form = await request.form()
    draft = workflows.WorkflowDraft(
        project_id=int(str(form.get("project_id", "0")) or 0),
        name=str(form.get("name", "")),
        steps=_steps_from(form),
        is_shared=form.get("is_shared") == "on",
    )
    try:
        workflow = await workflows.create(session, actor, draft)
    except ValidationFailed as error:
        errors = dict(error.fields) or {"form": error.detail}
        return await _list_page(
            request, session, web, actor, form=dict(form), errors=errors, status_code=422
        )
    return redirect(request, f"/workflows/{workflow.id}")


@router.get("/workflows/{workflow_id:int}", name="workflow")
async def workflow_page(
    request: Request,
    session: SessionDep,
    web: WebContextDep,
    actor: CurrentUser,
    workflow_id: PathId,
) -> Response:
    workflow = await workflows.get_visible(session, actor, workflow_id)
    steps = workflows.steps_of(workflow)
    context = {
        "workflow": workflow,
        "steps": steps,
        "template_names": await _template_names(session, actor, steps),
        "runs": await workflows.list_runs(session, workflow, actor),
        "dependency_words": dependency_words(),
    }
    return page(request, web, "workflows/detail.html", context)


@router.post("/workflows/{workflow_id:int}/run", name="workflow_run_start")
async def run_workflow(
    request: Request,
    session: SessionDep,
    actor: CurrentUser,
    runner: WorkflowRunnerDep,
    choices: SubmitChoicesDep,
    workflow_id: PathId,
) -> Response:
    plan = await workflows.plan_run(
        session, actor, workflow_id, lambda project: choices.context_for(session, actor, project)
    )
    run_id = await runner.start(actor, plan, origin=web_origin(request))
    return redirect(request, f"/workflows/runs/{run_id}")


@router.get("/workflows/runs/{run_id:int}", name="workflow_run")
async def run_page(
    request: Request, session: SessionDep, web: WebContextDep, actor: CurrentUser, run_id: PathId
) -> Response:
    view = await workflows.get_run(session, actor, run_id)
    context = {
        "view": view,
        "graph": render_run_graph(view.steps),
        "stuck": {v.step.name: stuck(v.job) for v in view.steps if v.job is not None},
        "is_live": any(v.job is not None and not workflows.is_done(v.job) for v in view.steps),
        "is_owner": view.run.owner_user_id == actor.user_id,
        "dependency_words": dependency_words(),
        "badge": state_badge,
    }
    block = "run_status" if request.headers.get("HX-Request") else None
    return page(request, web, "workflows/run.html", context, block=block)


@router.post("/workflows/runs/{run_id:int}/rerun", name="workflow_rerun")
async def rerun_workflow(
    request: Request,
    session: SessionDep,
    actor: CurrentUser,
    runner: WorkflowRunnerDep,
    choices: SubmitChoicesDep,
    run_id: PathId,
) -> Response:
    plan = await workflows.plan_rerun(
        session, actor, run_id, lambda project: choices.context_for(session, actor, project)
    )
    await runner.start(actor, plan, origin=web_origin(request))
    return redirect(request, f"/workflows/runs/{run_id}")
