"""The parameter schema a template version carries, as a validated pydantic model.

Stored as JSON in ``TemplateVersion.parameter_schema`` (``{"parameters": [...]}``); the
per-parameter defaults live in ``TemplateVersion.defaults`` so a clone can change them
without touching the schema.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator
from pydantic_core import ErrorDetails

from app.i18n import _, ngettext

ParameterType = Literal[
    "text",
    "words",
    "integer",
    "number",
    "choice",
    "boolean",
    "duration",
    "memory",
    "path",
    "partition",
    "account",
    "gpu",
]
PARAMETER_TYPES: tuple[str, ...] = ParameterType.__args__  # type: ignore[attr-defined]

Resource = Literal[
    "partition",
    "time_limit",
    "cpus_per_task",
    "ntasks",
    "nodes",
    "memory",
    "gpus",
    "gpu_type",
    "array",
    "work_dir",
    "stdout",
    "stderr",
]
RESOURCES: tuple[str, ...] = Resource.__args__  # type: ignore[attr-defined]

# Which parameter types may feed which JobRequest field: a resource is only ever set from
# a value whose type already guarantees its shape.
RESOURCE_TYPES: dict[str, frozenset[str]] = {
    "partition": frozenset({"partition", "choice"}),
    "time_limit": frozenset({"duration"}),
    "cpus_per_task": frozenset({"integer"}),
    "ntasks": frozenset({"integer"}),
    "nodes": frozenset({"integer"}),
    "memory": frozenset({"memory"}),
    "gpus": frozenset({"gpu", "integer"}),
    "gpu_type": frozenset({"choice"}),
    "array": frozenset({"text"}),
    "work_dir": frozenset({"path"}),
    "stdout": frozenset({"path"}),
    "stderr": frozenset({"path"}),
}
NAME_PATTERN = r"^[a-z][a-z0-9_]{0,39}$"
RESERVED_NAMES = frozenset({"job_name", "csrf_token", "project"})
DEFAULT_MAX_LENGTH = 1000


class Parameter(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(pattern=NAME_PATTERN)
    label: str = Field(min_length=1, max_length=120)
    help: str = Field(default="", max_length=500)
    type: ParameterType
    required: bool = True
    default: Any = None
    min: float | None = None
    max: float | None = None
    choices: tuple[str, ...] = ()
    maps_to: Resource | None = None

    @model_validator(mode="after")
    def _check_consistency(self) -> Parameter:
        if self.name in RESERVED_NAMES:
            raise ValueError(_("the name %(name)s is reserved", name=repr(self.name)))
        if self.type == "choice" and not self.choices:
            raise ValueError(_("%(name)s: a choice needs at least one option", name=self.name))
        if self.maps_to and self.type not in RESOURCE_TYPES[self.maps_to]:
            allowed = ", ".join(sorted(RESOURCE_TYPES[self.maps_to]))
            raise ValueError(
                _(
                    "%(name)s: %(resource)s can only come from: %(types)s",
                    name=self.name,
                    resource=self.maps_to,
                    types=allowed,
                )
            )
        if self.min is not None and self.max is not None and self.min > self.max:
            raise ValueError(_("%(name)s: min is larger than max", name=self.name))
        return self


class TemplateSchema(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    parameters: tuple[Parameter, ...] = ()

    @model_validator(mode="after")
    def _check_unique(self) -> TemplateSchema:
        names = [parameter.name for parameter in self.parameters]
        duplicates = sorted({name for name in names if names.count(name) > 1})
        if duplicates:
            raise ValueError(
                _("parameter names must be unique: %(names)s", names=", ".join(duplicates))
            )
        targets = [p.maps_to for p in self.parameters if p.maps_to and p.type != "gpu"]
        repeated = sorted({t for t in targets if targets.count(t) > 1})
        if repeated:
            raise ValueError(
                _("more than one parameter sets %(resources)s", resources=", ".join(repeated))
            )
        return self

    def get(self, name: str) -> Parameter | None:
        return next((p for p in self.parameters if p.name == name), None)

    def account_parameter(self) -> Parameter:
        """The parameter choosing the account; templates without one get a standard one."""
        found = next((p for p in self.parameters if p.type == "account"), None)
        return found or Parameter(
            name="account",
            label=_("Project"),
            type="account",
            help=_("The job's time is charged to this project's allocation."),
        )


def load_schema(raw: dict[str, Any] | None) -> TemplateSchema:
    return TemplateSchema.model_validate(raw or {})


def schema_problems(raw: dict[str, Any]) -> list[str]:
    """Plain sentences for everything wrong with a schema, empty when it is valid."""
    try:
        TemplateSchema.model_validate(raw)
    except ValidationError as error:
        problems = []
        for item in error.errors():
            where = ".".join(str(part) for part in item["loc"])
            message = _problem(item)
            problems.append(
                _("%(field)s: %(problem)s", field=where, problem=message) if where else message
            )
        return problems
    return []


def _alternatives(expected: str) -> str:
    """pydantic's "'a', 'b' or 'c'" with the last "or" in the current language."""
    choices = re.findall(r"'[^']*'", expected)
    if len(choices) < 2:
        return expected
    return _("%(first)s or %(second)s", first=", ".join(choices[:-1]), second=choices[-1])


def _problem(item: ErrorDetails) -> str:
    """pydantic's message for one error, in the current language where it is a common one
    (the English is pydantic's own, word for word)."""
    kind, context = item["type"], item.get("ctx") or {}
    if kind == "value_error":
        return str(context.get("error", item["msg"]))
    if kind == "string_pattern_mismatch":
        return _("String should match pattern '%(pattern)s'", pattern=context["pattern"])
    if kind in ("string_too_short", "string_too_long"):
        if kind == "string_too_short":
            count = int(context["min_length"])
            return ngettext(
                "String should have at least %(num)d character",
                "String should have at least %(num)d characters",
                count,
            )
        count = int(context["max_length"])
        return ngettext(
            "String should have at most %(num)d character",
            "String should have at most %(num)d characters",
            count,
        )
    if kind == "literal_error":
        return _("Input should be %(expected)s", expected=_alternatives(str(context["expected"])))
    simple = {
        "missing": _("Field required"),
        "extra_forbidden": _("Extra inputs are not permitted"),
        "float_parsing": _("Input should be a valid number, unable to parse string as a number"),
        "bool_parsing": _("Input should be a valid boolean, unable to interpret input"),
        "string_type": _("Input should be a valid string"),
    }
    return simple.get(kind, str(item["msg"]))
