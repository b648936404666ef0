"""The "Submit a script" page: a researcher's own sbatch script, pasted or uploaded, run as is.

The page shows what the portal read from the script's ``#SBATCH`` lines (and what sbatch
would refuse or ignore) before anything is submitted; a refusal keeps the script in the form
and says why, in plain words and in Slurm's own.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any

from fastapi import Request
from fastapi.responses import Response
from sqlalchemy.ext.asyncio import AsyncSession
from starlette.datastructures import FormData, UploadFile

from app.deps import SessionDep
from app.errors import ValidationFailed
from app.i18n import _
from app.jobs import authz
from app.jobs.editable import editable_script
from app.jobs.requests import JobRequest
from app.models import Project
from app.scheduler.directives import DirectiveProblem, read_directives
from app.scheduler.messages import translate
from app.submissions.service import ScriptSubmission, build_request, explained
from app.users.actor import Actor
from app.web.auth import CurrentUser, WebContext, WebContextDep, csrf_protected_router
from app.web.choices import actor_projects, context_for
from app.web.submission import check_job, submit_job
from app.web.views import page, redirect

router = csrf_protected_router()
MAX_UPLOAD_BYTES = 1024 * 1024
EXAMPLE = "#!/bin/bash\n#SBATCH --job-name=hello\n#SBATCH --time=00:05:00\n\necho hello\n"


@dataclass
class ScriptForm:
    """What the form holds, as typed or uploaded."""

    project_id: int | None = None
    script: str = ""
    args: list[str] = field(default_factory=list)
    script_name: str | None = None
    idempotency_key: str = field(default_factory=lambda: str(uuid.uuid4()))

    @property
    def args_text(self) -> str:
        return "\n".join(self.args)


async def _read_form(form: FormData) -> ScriptForm:
    upload = form.get("script_file")
    script, name = str(form.get("script", "")), None
    if isinstance(upload, UploadFile) and upload.filename:
        data = await upload.read(MAX_UPLOAD_BYTES + 1)
        if len(data) > MAX_UPLOAD_BYTES:
            too_large = _("The script is larger than %(size)s.", size="1 MiB")
            raise ValidationFailed(fields={"script": too_large})
        try:
            script, name = data.decode(), upload.filename
        except UnicodeDecodeError as error:
            raise ValidationFailed(fields={"script": _("The file is not a text file.")}) from error
    project = str(form.get("project_id", ""))
    return ScriptForm(
        project_id=int(project) if project.isdigit() and len(project) < 12 else None,
        # Browsers send CRLF from a textarea; the script runs on Linux.
        script=script.replace("\r\n", "\n"),
        args=[line for line in str(form.get("args", "")).replace("\r\n", "\n").split("\n") if line],
        script_name=name or (str(form.get("script_name", "")) or None),
        idempotency_key=str(form.get("idempotency_key", "")) or str(uuid.uuid4()),
    )


def _reading(form: ScriptForm) -> dict[str, Any]:
    """What sbatch would read from the script: directives, refusals (in the reader's
    language), ignored lines."""
    read = read_directives(form.script)
    return {
        "directives": read.directives,
        "errors": [_explained_problem(problem) for problem in read.errors],
        "ignored": read.ignored,
        "has_shebang": form.script.startswith("#!"),
    }


def _explained_problem(problem: DirectiveProblem) -> DirectiveProblem:
    return DirectiveProblem(problem.line, problem.text, translate(problem.message, _))


async def _page(
    request: Request,
    session: AsyncSession,
    web: WebContext,
    actor: Actor,
    form: ScriptForm,
    failure: ValidationFailed | None = None,
) -> Response:
    projects = await actor_projects(session, actor)
    context = {
        "form": form,
        "projects": projects,
        "reading": _reading(form) if form.script else None,
        "failure": failure,
        "example": EXAMPLE,
    }
    status = failure.status_code if failure else 200
    return page(request, web, "submit/script.html", context, status_code=status)


@router.get("/submit/script", name="script_submit")
async def script_page(
    request: Request,
    session: SessionDep,
    web: WebContextDep,
    actor: CurrentUser,
    from_job: int | None = None,
) -> Response:
    form = ScriptForm()
    if from_job is not None and 0 < from_job < 2**31:
        job = await authz.get_visible_job(session, actor, from_job)
        script = editable_script(job)
        form = ScriptForm(job.project_id, script, list(job.script_args or []), job.name)
    return await _page(request, session, web, actor, form)


@router.post("/submit/script/check", name="script_check")
async def script_check(
    request: Request, session: SessionDep, web: WebContextDep, actor: CurrentUser
) -> Response:
    form = await _read_form(await request.form())
    context = {"reading": _reading(form) if form.script else None}
    return page(request, web, "submit/script.html", context, block="reading")


@router.post("/submit/script/preflight", name="script_preflight")
async def script_preflight(
    request: Request, session: SessionDep, web: WebContextDep, actor: CurrentUser
) -> Response:
    """The cluster's verdict (preflight and sbatch --test-only), nothing submitted."""
    failure: ValidationFailed | None = None
    try:
        form = await _read_form(await request.form())
        await check_job(request, session, actor, await _request(request, session, actor, form))
    except ValidationFailed as error:
        failure = explained(error)
    context = {"verdict": {"failure": failure}}
    return page(request, web, "submit/script.html", context, block="verdict")


@router.post("/submit/script")
async def script_submit(
    request: Request, session: SessionDep, web: WebContextDep, actor: CurrentUser
) -> Response:
    form = ScriptForm()
    try:
        form = await _read_form(await request.form())
        job_id = await _submit(request, session, actor, form)
    except ValidationFailed as failure:
        return await _page(request, session, web, actor, form, explained(failure))
    return redirect(request, f"/jobs/{job_id}")


async def _request(
    request: Request, session: AsyncSession, actor: Actor, form: ScriptForm
) -> JobRequest:
    project = _project(await actor_projects(session, actor), form.project_id)
    submission = ScriptSubmission(
        form.script, project.id, tuple(form.args), script_name=form.script_name
    )
    return await build_request(
        session, actor, submission, lambda p: context_for(request, session, actor, p)
    )


async def _submit(request: Request, session: AsyncSession, actor: Actor, form: ScriptForm) -> int:
    job = await _request(request, session, actor, form)
    return await submit_job(request, session, actor, job, form.idempotency_key)


def _project(projects: list[Project], chosen: int | None) -> Project:
    found = next((p for p in projects if p.id == chosen), None)
    if found is None:
        raise ValidationFailed(fields={"project_id": _("Choose one of your projects.")})
    return found
