"""One mapping between what is asked (JobRequest), what is sent (JobSpec) and what is kept
(the Job row), used in all three directions: submitting, recording and resubmitting.

Most fields have one name in the request and the row, and that or another name in the spec;
``COPIED`` declares them once. The few that change shape on the way are converted below,
each once.
"""

from __future__ import annotations

from typing import Any

from app.jobs.requests import JobRequest
from app.models.jobs import Job
from app.scheduler.types import Gres

COPIED: dict[str, str | None] = {
    # request and row field: its JobSpec field (None: the spec does not carry it)
    "script": "script",
    "name": "name",
    "partition": "partition",
    "qos": "qos",
    "time_limit_minutes": "time_limit",
    "nodes": "nodes",
    "ntasks": "ntasks",
    "cpus_per_task": "cpus_per_task",
    "memory_mb": "memory_mb",
    "gpus": None,  # sent as gres
    "gpu_type": None,  # sent as gres
    "array_spec": "array",
    "work_dir": "working_dir",
    "stdout_path": "stdout",
    "stderr_path": "stderr",
    "template_version_id": None,
}
CONVERTED = frozenset({"project_id", "environment", "args", "parameters"})
"""Request fields kept in another shape: converted by the functions below."""
NOT_RESUBMITTED = frozenset({"retry_of_id", "warnings", "after"})
"""Request fields a resubmission does not copy from the job it starts from: a copy waits for
no earlier job (those it named have usually ended), unless its submitter names them again."""


def spec_values(request: JobRequest) -> dict[str, Any]:
    """The JobSpec fields a request sets (the account and comment come from elsewhere)."""
    values = {spec: getattr(request, name) for name, spec in COPIED.items() if spec}
    gres = (Gres("gpu", request.gpus, request.gpu_type or ""),) if request.gpus else ()
    values.update(gres=gres, environment=dict(request.environment), args=tuple(request.args))
    return values


def stored_values(request: JobRequest) -> dict[str, Any]:
    """The Job columns a request fills (the owner, project row and state come from elsewhere)."""
    values = {name: getattr(request, name) for name in COPIED}
    values.update(
        parameters=dict(request.parameters),
        script_args=list(request.args) or None,
        environment=dict(request.environment) or None,
        # The column kept before cpus_per_task was; still filled for older readers.
        cpus=request.cpus_per_task,
        retry_of_id=request.retry_of_id,
    )
    return values


def request_values(job: Job) -> dict[str, Any]:
    """The JobRequest fields that ask for ``job`` again."""
    values = {name: getattr(job, name) for name in COPIED}
    values.update(
        project_id=job.project_id,
        args=tuple(job.script_args or ()),
        # Rows written before cpus_per_task was kept recorded it as ``cpus``.
        cpus_per_task=job.cpus_per_task if job.cpus_per_task is not None else job.cpus,
        environment=dict(job.environment or {}),
        parameters=dict(job.parameters or {}),
    )
    return values
