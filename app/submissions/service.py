"""One submission use case for every surface.

A template with parameters and a researcher's own script both become the JobRequest the
jobs service submits, here and nowhere else: the web pages, the API and (through the API)
the CLI describe what the submitter asked for and call :func:`build_request`. Rendering is
the templates package's job, reading a script the jobs package's and authorization the
projects package's; this module picks the version and the project, fills in the account the
project charges, and applies the raw-script policy.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from app.errors import Forbidden, ValidationFailed
from app.i18n import _
from app.job_templates import service as templates
from app.job_templates.context import SubmitContext
from app.job_templates.render import render
from app.job_templates.schema import load_schema
from app.jobs.dependencies import After
from app.jobs.requests import JobRequest
from app.jobs.scripts import ReadScript, ScriptJob, read_script
from app.models.job_templates import TemplateVersion
from app.models.projects import Project
from app.projects import service as projects
from app.scheduler.directives import Directive
from app.scheduler.messages import translate
from app.users.actor import Actor

ContextFor = Callable[[Project], Awaitable[SubmitContext]]


@dataclass(frozen=True, slots=True)
class TemplateSubmission:
    """A template's parameters as the submitter filled them in."""

    template_id: int
    parameters: Mapping[str, Any] = field(default_factory=dict)
    version: int | None = None
    """The version the submitter saw; None for the current one."""
    project_id: int | None = None
    """None: the template's own project, or the submitter's only one."""
    after: tuple[After, ...] = ()


@dataclass(frozen=True, slots=True)
class ScriptSubmission:
    """A script submitted as it is, with its arguments and sbatch-style overrides."""

    script: str
    project_id: int | None = None
    args: tuple[str, ...] = ()
    overrides: tuple[Directive, ...] = ()
    script_name: str | None = None
    after: tuple[After, ...] = ()


Submission = TemplateSubmission | ScriptSubmission


def may_submit_raw_script(actor: Actor, project: Project) -> bool:
    """Site policy for scripts that come from no template: any member of the project."""
    return actor.is_site_admin or actor.is_member_of(project.id)


async def build_request(
    session: AsyncSession, actor: Actor, submission: Submission, context_for: ContextFor
) -> JobRequest:
    """The JobRequest for ``submission``; ValidationFailed/NotFound/Forbidden when it cannot be.

    ``context_for`` gives the submitter's home, roots and choices on the project's cluster,
    so paths like ``~/out.txt`` mean the same on every surface.
    """
    if isinstance(submission, TemplateSubmission):
        request = await _template_request(session, actor, submission, context_for)
    else:
        request = (await read_submitted_script(session, actor, submission, context_for)).request
    # The jobs it waits for are checked (own jobs, same cluster) when it is submitted.
    return dataclasses.replace(request, after=submission.after)


async def read_submitted_script(
    session: AsyncSession, actor: Actor, submission: ScriptSubmission, context_for: ContextFor
) -> ReadScript:
    """The script read as sbatch reads it, for the project it is charged to."""
    project = await _project(session, actor, submission.project_id, None)
    if not may_submit_raw_script(actor, project):
        raise Forbidden(_("Only a template can be submitted to this project."))
    context = await context_for(project)
    home = context.home
    if home is None:
        raise ValidationFailed(
            _("No home directory is known on %(cluster)s.", cluster=project.cluster)
        )
    job = ScriptJob(
        project.id,
        submission.script,
        submission.args,
        submission.overrides,
        submission.script_name,
    )
    try:
        return read_script(job, project.slurm_account, home, context.scheduler)
    except ValidationFailed as error:
        raise explained(error) from error


def explained(error: ValidationFailed) -> ValidationFailed:
    """``error`` with the scheduler library's sentences (what sbatch would refuse and why) in
    the current language; what Slurm itself said stays as it is."""
    fields = {name: translate(message, _) for name, message in error.fields.items()}
    failure = ValidationFailed(translate(error.detail, _), fields, error.raw)
    failure.status_code = error.status_code
    return failure


async def _template_request(
    session: AsyncSession, actor: Actor, submission: TemplateSubmission, context_for: ContextFor
) -> JobRequest:
    template, version = await templates.pinned_version(
        session, actor, submission.template_id, submission.version
    )
    project = await _project(session, actor, submission.project_id, template.project_id)
    parameters = _with_account(version, submission.parameters, project)
    return render(version, parameters, project, await context_for(project))


async def _project(
    session: AsyncSession, actor: Actor, chosen: int | None, template_project: int | None
) -> Project:
    chosen = chosen or template_project
    if chosen is None:
        views = await projects.list_for_actor(session, actor)
        if len(views) != 1:
            raise ValidationFailed(fields={"project_id": _("Choose the project to charge.")})
        chosen = views[0].project.id
    return (await projects.get(session, actor, chosen)).project


def _with_account(
    version: TemplateVersion, parameters: Mapping[str, Any], project: Project
) -> dict[str, Any]:
    # The project names the account to charge; a submitter need not repeat it, and one who
    # names another account is told it does not belong to the project.
    account = load_schema(version.parameter_schema).account_parameter().name
    return {account: project.slurm_account, **parameters}
