"""An API submit body as the submission the submissions service turns into a JobRequest."""

from __future__ import annotations

from app.api.v1.schemas import SubmitIn
from app.errors import ValidationFailed
from app.jobs.dependencies import After
from app.jobs.scripts import overrides_from_options
from app.submissions.service import ScriptSubmission, Submission, TemplateSubmission


def submission_from(body: SubmitIn) -> Submission:
    """What ``body`` asks for; ValidationFailed when it mixes a template and a script."""
    if (body.template_id is None) == (body.script is None):
        detail = "Give either template_id (with parameters) or script, not both."
        raise ValidationFailed(detail, {"template_id": detail})
    if body.template_id is not None:
        if body.args:
            detail = "args go with a script; a template takes parameters."
            raise ValidationFailed(detail, {"args": detail})
        return TemplateSubmission(
            body.template_id,
            body.parameters,
            body.template_version,
            body.project_id,
            after_of(body),
        )
    assert body.script is not None
    # The body's fields override the script's #SBATCH lines, as sbatch's command line does.
    options = [
        (option, str(value))
        for option, value in (
            ("job-name", body.name),
            ("partition", body.partition),
            ("time", body.time_limit_minutes),
            ("cpus-per-task", body.cpus_per_task),
            ("mem", body.memory_mb),
            ("array", body.array),
        )
        if value is not None
    ]
    return ScriptSubmission(
        body.script,
        body.project_id,
        tuple(body.args),
        overrides_from_options(options),
        body.script_name,
        after_of(body),
    )


def after_of(body: SubmitIn) -> tuple[After, ...]:
    return tuple(After(item.kind, tuple(item.job_ids)) for item in body.depends_on)
