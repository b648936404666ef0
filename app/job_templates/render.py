"""Renders a template version with submitted parameters into a JobRequest.

Resources travel as JobRequest fields (sbatch options), never as ``#SBATCH`` lines made from
user input. The script language (``script_language``) has references and conditionals only,
so rendering is linear in the template's size; values reach the script as inert words or as
quoted references to environment variables (``shell_quoting``), never as shell syntax.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from babel.numbers import format_decimal

from app import i18n
from app.errors import ValidationFailed
from app.i18n import _
from app.job_templates.coerce import GpuRequest, coerce, is_empty
from app.job_templates.context import SubmitContext
from app.job_templates.resources import apply_resources, check_nodes_tasks, check_partition_time
from app.job_templates.schema import Parameter, TemplateSchema, load_schema
from app.job_templates.script_language import Template, TemplateSyntaxError, evaluate, parse
from app.job_templates.shell_quoting import (
    QuotedScript,
    ScriptTooLarge,
    UnsafePlacement,
    Words,
    quote_pieces,
)
from app.jobs.requests import JobRequest
from app.models.job_templates import TemplateVersion
from app.models.projects import Project

_JOB_NAME = re.compile(r"[A-Za-z0-9_.+-][A-Za-z0-9_.+ -]{0,127}")
_SBATCH_WITH_EXPRESSION = re.compile(r"^\s*#SBATCH.*(\{\{|\{%)", re.MULTILINE)
MAX_SCRIPT_CHARS = 256 * 1024
# Rendering is linear in the source; this bound keeps one render to a few milliseconds.
MAX_SOURCE_CHARS = 100_000


def script_problem(source: str) -> str | None:
    """Why ``source`` cannot be a template script, or None."""
    problem, _template = _checked(source)
    return problem


def _checked(source: str) -> tuple[str | None, Template | None]:
    if len(source) > MAX_SOURCE_CHARS:
        limit = format_decimal(MAX_SOURCE_CHARS, locale=i18n.current_locale())
        return _("The script must be at most %(limit)s characters.", limit=limit), None
    if "\x00" in source:
        return _("The script must not contain NUL characters."), None
    if not source.startswith("#!"):
        example = "#!/bin/bash"
        return _(
            "The script must start with an interpreter line such as %(example)s.", example=example
        ), None
    if _SBATCH_WITH_EXPRESSION.search(source):
        return _(
            "Parameters cannot be used in %(directive)s lines; map them to a resource instead.",
            directive="#SBATCH",
        ), None
    try:
        return None, parse(source)
    except TemplateSyntaxError as error:
        return _("Template syntax error: %(error)s", error=str(error)), None


@dataclass(frozen=True, slots=True)
class Coerced:
    values: dict[str, Any]
    errors: dict[str, str]


def _raw_value(
    parameter: Parameter, submitted: Mapping[str, Any], defaults: Mapping[str, Any]
) -> Any:
    if parameter.name in submitted:
        return submitted[parameter.name]
    if parameter.type == "boolean" and submitted:
        return False
    return defaults.get(parameter.name, parameter.default)


def coerce_all(
    schema: TemplateSchema,
    submitted: Mapping[str, Any],
    defaults: Mapping[str, Any],
    context: SubmitContext,
) -> Coerced:
    values: dict[str, Any] = {}
    errors: dict[str, str] = {}
    for parameter in (*schema.parameters, schema.account_parameter()):
        if parameter.name in values:
            continue
        raw = _raw_value(parameter, submitted, defaults)
        if is_empty(raw):
            if parameter.required and parameter.type not in ("boolean", "gpu"):
                errors[parameter.name] = _("This field is required.")
            # No words adds no argument; None would stand as one empty argument.
            values[parameter.name] = Words(()) if parameter.type == "words" else None
            continue
        try:
            values[parameter.name] = coerce(parameter, context, raw)
        except ValueError as error:
            errors[parameter.name] = _sentence(str(error))
    return Coerced(values, errors)


def _sentence(message: str) -> str:
    text = message[:1].upper() + message[1:]
    return text if text.endswith(".") else text + "."


def _script_values(values: Mapping[str, Any]) -> dict[str, Any]:
    return {name: (str(v) if isinstance(v, GpuRequest) else v) for name, v in values.items()}


def _render_script(source: str, values: Mapping[str, Any]) -> QuotedScript:
    problem, template = _checked(source)
    if template is None:
        raise ValidationFailed(
            _("The template's script is broken."), fields={"script": str(problem)}
        )
    script_values = _script_values(values)
    try:
        pieces = evaluate(template, script_values)
        quoted = quote_pieces(pieces, script_values, MAX_SCRIPT_CHARS)
    except KeyError as error:
        problem = _("%(name)s is not a parameter", name=repr(error.args[0]))
        raise ValidationFailed(
            _("The template's script could not be rendered."),
            fields={"script": _("Template error: %(error)s.", error=problem)},
        ) from None
    except ScriptTooLarge:
        raise ValidationFailed(fields={"script": _too_large()}) from None
    except UnsafePlacement as error:
        raise ValidationFailed(
            _("The template's script could not be rendered."),
            fields={"script": _("Template error: %(error)s.", error=str(error))},
        ) from None
    if len(quoted.script) > MAX_SCRIPT_CHARS:
        raise ValidationFailed(fields={"script": _too_large()})
    return quoted


def _too_large() -> str:
    return _("The rendered script is larger than %(size)s.", size="256 KB")


def _job_name(submitted: Mapping[str, Any], fallback: str) -> tuple[str, str | None]:
    name = submitted.get("job_name")
    text = fallback if is_empty(name) else str(name).strip()
    if not _JOB_NAME.fullmatch(text):
        return text, _(
            "Use up to %(count)s letters, digits, spaces and ._+- characters.", count=128
        )
    return text, None


def render(
    version: TemplateVersion,
    parameters: Mapping[str, Any],
    project: Project,
    context: SubmitContext | None = None,
) -> JobRequest:
    """The JobRequest for ``version`` filled with ``parameters``, charged to ``project``.

    Raises ValidationFailed with one plain-language message per offending field.
    """
    context = context or SubmitContext(cluster=project.cluster, accounts=(project.slurm_account,))
    schema = load_schema(version.parameter_schema)
    coerced = coerce_all(schema, parameters, version.defaults or {}, context)
    errors = dict(coerced.errors)
    account_name = schema.account_parameter().name
    if coerced.values.get(account_name) not in (None, project.slurm_account):
        errors[account_name] = _(
            "This account does not belong to project %(project)s.", project=project.name
        )
    fallback = str((version.defaults or {}).get("job_name") or "job")
    name, name_error = _job_name(parameters, fallback)
    if name_error:
        errors["job_name"] = name_error
    resources = apply_resources(schema, coerced.values)
    errors.update(check_partition_time(schema, coerced.values, context, errors))
    errors.update(check_nodes_tasks(schema, coerced.values, errors))
    if errors:
        raise ValidationFailed(_("Some values need fixing."), fields=errors)
    quoted = _render_script(version.script, coerced.values)
    return JobRequest(
        project_id=project.id,
        script=quoted.script,
        environment=quoted.environment,
        name=name,
        template_version_id=version.id,
        parameters=_json_values(coerced.values),
        **resources,
    )


def _json_value(value: Any) -> Any:
    if isinstance(value, GpuRequest):
        return {"type": value.type, "count": value.count}
    if isinstance(value, Words):
        # Quoted again so the stored text splits into the same words when submitted again.
        return shlex.join(value.items)
    return value


def _json_values(values: Mapping[str, Any]) -> dict[str, Any]:
    return {name: _json_value(v) for name, v in values.items()}
