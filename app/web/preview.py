"""The read-only preview of what would be submitted: the sbatch command and the script."""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from app.errors import ValidationFailed
from app.i18n import _
from app.job_templates.context import SubmitContext
from app.job_templates.render import render
from app.jobs.requests import JobRequest
from app.jobs.submission import build_spec
from app.models.job_templates import TemplateVersion
from app.models.projects import Project
from app.scheduler.errors import InvalidSpec
from app.scheduler.messages import translate
from app.scheduler.slurm.commands import sbatch_argv

PREVIEW_JOB_ID = "portal-job-id"


@dataclass(frozen=True, slots=True)
class Preview:
    command: str | None = None
    script: str | None = None
    errors: Mapping[str, str] = field(default_factory=dict)
    request: JobRequest | None = None


def sbatch_command(request: JobRequest, project: Project) -> str:
    argv = sbatch_argv(build_spec(request, project, PREVIEW_JOB_ID))
    return shlex.join(argv)


def build_preview(
    version: TemplateVersion,
    values: Mapping[str, Any],
    project: Project,
    context: SubmitContext,
) -> Preview:
    try:
        request = render(version, values, project, context)
        command = sbatch_command(request, project)
    except ValidationFailed as error:
        errors = error.fields or {"form": error.detail}
        return Preview(errors={name: translate(text, _) for name, text in errors.items()})
    except InvalidSpec as error:
        return Preview(errors={error.field: translate(error.message, _)})
    return Preview(command=command, script=request.script, request=request)
