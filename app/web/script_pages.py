"""The "Submit a script" page: a researcher's own sbatch script, pasted or uploaded, run as is.

The page shows what the portal read from the script's ``#SBATCH`` lines (``#PBS`` or ``#BSUB``
on a PBS or LSF cluster), and what the scheduler would refuse or ignore, before anything is
submitted; a refusal keeps the script in the form and says why, in plain words and in the
scheduler's own.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any

from fastapi import Request
from fastapi.responses import Response
from sqlalchemy.ext.asyncio import AsyncSession
from starlette.datastructures import FormData, UploadFile

from app.announcements import service as announcements
from app.announcements.maintenance import Clash
from app.deps import JobServiceDep, SessionDep, SubmitChoicesDep
from app.errors import ValidationFailed
from app.i18n import _
from app.jobs import authz
from app.jobs.dependencies import After
from app.jobs.editable import editable_script
from app.jobs.requests import JobRequest
from app.jobs.script_readers import reader_for
from app.models.base import utc_now
from app.models.projects import Project
from app.reports.allocation import allocation_warning
from app.scheduler.directive_values import time_minutes
from app.scheduler.directives import DirectiveProblem
from app.scheduler.messages import translate
from app.submissions.choices import SubmitChoices, actor_projects
from app.submissions.service import ScriptSubmission, build_request, explained
from app.users.actor import Actor
from app.web.auth import CurrentUser, WebContext, WebContextDep, csrf_protected_router
from app.web.depends_on import after_context, after_from
from app.web.submission import submit_job
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
    after: tuple[After, ...] = ()

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
        after=after_from(form),
    )


def _reading(form: ScriptForm, scheduler: str = "slurm") -> dict[str, Any]:
    """What the cluster's scheduler (sbatch, qsub, bsub) would read from the script:
    directives, refusals (in the reader's language), ignored lines."""
    reader = reader_for(scheduler)
    read = reader.read(form.script)
    return {
        "directives": read.directives,
        "errors": [_explained_problem(problem) for problem in read.errors],
        "ignored": read.ignored,
        "has_shebang": form.script.startswith("#!"),
        "reader": reader,
    }


async def _scheduler(
    choices: SubmitChoices, session: AsyncSession, actor: Actor, project_id: int | None
) -> str:
    """The scheduler of the chosen project's cluster, whose directives the script uses."""
    project = next((p for p in await actor_projects(session, actor) if p.id == project_id), None)
    config = choices.clusters.get(project.cluster) if project is not None else None
    return config.scheduler if config is not None else "slurm"


def _explained_problem(problem: DirectiveProblem) -> DirectiveProblem:
    return DirectiveProblem(problem.line, problem.text, translate(problem.message, _))


async def _page(
    request: Request,
    session: AsyncSession,
    web: WebContext,
    actor: Actor,
    form: ScriptForm,
    failure: ValidationFailed | None = None,
    scheduler: str = "slurm",
) -> Response:
    projects = await actor_projects(session, actor)
    context = {
        "form": form,
        "projects": projects,
        "reading": _reading(form, scheduler) if form.script else None,
        "failure": failure,
        "example": EXAMPLE,
        **await after_context(session, actor, form.after),
    }
    status = failure.status_code if failure else 200
    return page(request, web, "submit/script.html", context, status_code=status)


@router.get("/submit/script", name="script_submit")
async def script_page(
    request: Request,
    session: SessionDep,
    web: WebContextDep,
    actor: CurrentUser,
    choices: SubmitChoicesDep,
    from_job: int | None = None,
) -> Response:
    form = ScriptForm()
    if from_job is not None and 0 < from_job < 2**31:
        job = await authz.get_visible_job(session, actor, from_job)
        script = editable_script(job)
        form = ScriptForm(job.project_id, script, list(job.script_args or []), job.name)
    scheduler = await _scheduler(choices, session, actor, form.project_id)
    return await _page(request, session, web, actor, form, scheduler=scheduler)


@router.post("/submit/script/check", name="script_check")
async def script_check(
    request: Request,
    session: SessionDep,
    web: WebContextDep,
    actor: CurrentUser,
    choices: SubmitChoicesDep,
) -> Response:
    form = await _read_form(await request.form())
    scheduler = await _scheduler(choices, session, actor, form.project_id)
    reading = _reading(form, scheduler) if form.script else None
    context = {
        "reading": reading,
        "maintenance": await _maintenance(session, actor, form, reading),
    }
    return page(request, web, "submit/script.html", context, block="reading")


async def _maintenance(
    session: AsyncSession, actor: Actor, form: ScriptForm, reading: dict[str, Any] | None
) -> Clash | None:
    """The maintenance window the script's ``--time`` would wait for, if any."""
    project = next(
        (p for p in await actor_projects(session, actor) if p.id == form.project_id), None
    )
    if project is None or reading is None:
        return None
    options = {d.option: d.value for d in reading["directives"] if d.value is not None}
    try:
        minutes = time_minutes(options["time"]) if "time" in options else None
    except ValueError:
        return None
    return await announcements.maintenance_clash(
        session, project.cluster, minutes, options.get("partition")
    )


@router.post("/submit/script/preflight", name="script_preflight")
async def script_preflight(
    request: Request,
    session: SessionDep,
    web: WebContextDep,
    actor: CurrentUser,
    service: JobServiceDep,
    choices: SubmitChoicesDep,
) -> Response:
    """The cluster's verdict (preflight and sbatch --test-only), nothing submitted."""
    failure: ValidationFailed | None = None
    warning = None
    try:
        form = await _read_form(await request.form())
        job = await _request(choices, session, actor, form)
        project = _project(await actor_projects(session, actor), form.project_id)
        warning = await allocation_warning(session, project, job, utc_now().date())
        await service.check(actor, job)
    except ValidationFailed as error:
        failure = explained(error)
    context = {"verdict": {"failure": failure, "allocation_warning": warning}}
    return page(request, web, "submit/script.html", context, block="verdict")


@router.post("/submit/script")
async def script_submit(
    request: Request,
    session: SessionDep,
    web: WebContextDep,
    actor: CurrentUser,
    service: JobServiceDep,
    choices: SubmitChoicesDep,
) -> Response:
    form = ScriptForm()
    try:
        form = await _read_form(await request.form())
        job = await _request(choices, session, actor, form)
        job_id = await submit_job(service, request, actor, job, form.idempotency_key)
    except ValidationFailed as failure:
        scheduler = await _scheduler(choices, session, actor, form.project_id)
        return await _page(request, session, web, actor, form, explained(failure), scheduler)
    return redirect(request, f"/jobs/{job_id}")


async def _request(
    choices: SubmitChoices, session: AsyncSession, actor: Actor, form: ScriptForm
) -> JobRequest:
    project = _project(await actor_projects(session, actor), form.project_id)
    submission = ScriptSubmission(
        form.script, project.id, tuple(form.args), script_name=form.script_name, after=form.after
    )
    return await build_request(
        session, actor, submission, lambda p: choices.context_for(session, actor, p)
    )


def _project(projects: list[Project], chosen: int | None) -> Project:
    found = next((p for p in projects if p.id == chosen), None)
    if found is None:
        raise ValidationFailed(fields={"project_id": _("Choose one of your projects.")})
    return found
