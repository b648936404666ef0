"""A template job's parameters as the submitter gave them: each under its label, durations
and memory written the way they are typed (``0:05:00``, ``4G``), not as stored numbers."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError
from sqlalchemy.ext.asyncio import AsyncSession

from app.i18n import _
from app.job_templates.schema import Parameter, TemplateSchema, load_schema
from app.job_templates.values import format_duration, format_memory
from app.models.job_templates import TemplateVersion
from app.models.jobs import Job


async def schema_of(session: AsyncSession, job: Job) -> TemplateSchema | None:
    """The parameters the job's template version declared; None for a job without one."""
    if job.template_version_id is None:
        return None
    version = await session.get(TemplateVersion, job.template_version_id)
    try:
        return load_schema(version.parameter_schema) if version else None
    except ValidationError:
        return None


def _shown_value(parameter: Parameter | None, value: Any) -> str:
    kind = parameter.type if parameter else None
    if kind == "duration" and isinstance(value, int):
        return format_duration(value)
    if kind == "memory" and isinstance(value, int):
        return format_memory(value)
    if isinstance(value, bool):
        return _("yes") if value else _("no")
    if isinstance(value, Mapping) and {"type", "count"} <= value.keys():
        return f"{value['type']}:{value['count']}" if value["type"] else str(value["count"])
    return str(value)


def shown_parameters(job: Job, schema: TemplateSchema | None) -> list[tuple[str, str]]:
    """(label, value as typed) for each parameter the job was submitted with."""
    shown = []
    for name, value in (job.parameters or {}).items():
        parameter = schema.get(name) if schema else None
        label = parameter.label if parameter else name
        shown.append((label, _shown_value(parameter, value)))
    return shown
