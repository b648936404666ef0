"""The parameter schema a template version carries, as a validated pydantic model.

Stored as JSON in ``TemplateVersion.parameter_schema`` (``{"parameters": [...]}``); the
per-parameter defaults live in ``TemplateVersion.defaults`` so a clone can change them
without touching the schema.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

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
            raise ValueError(f"the name {self.name!r} is reserved")
        if self.type == "choice" and not self.choices:
            raise ValueError(f"{self.name}: a choice needs at least one option")
        if self.maps_to and self.type not in RESOURCE_TYPES[self.maps_to]:
            allowed = ", ".join(sorted(RESOURCE_TYPES[self.maps_to]))
            raise ValueError(f"{self.name}: {self.maps_to} can only come from: {allowed}")
        if self.min is not None and self.max is not None and self.min > self.max:
            raise ValueError(f"{self.name}: min is larger than max")
        return self


class TemplateSchema(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    parameters: tuple[Parameter, ...] = ()

    @model_validator(mode="after")
    def _check_unique(self) -> TemplateSchema:
        names = [parameter.name for parameter in self.parameters]
        duplicates = sorted({name for name in names if names.count(name) > 1})
        if duplicates:
            raise ValueError(f"parameter names must be unique: {', '.join(duplicates)}")
        targets = [p.maps_to for p in self.parameters if p.maps_to and p.type != "gpu"]
        repeated = sorted({t for t in targets if targets.count(t) > 1})
        if repeated:
            raise ValueError(f"more than one parameter sets {', '.join(repeated)}")
        return self

    def get(self, name: str) -> Parameter | None:
        return next((p for p in self.parameters if p.name == name), None)

    def account_parameter(self) -> Parameter:
        """The parameter choosing the account; templates without one get a standard one."""
        found = next((p for p in self.parameters if p.type == "account"), None)
        return found or Parameter(
            name="account", label="Account", type="account", help="The allocation billed."
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
            message = str(item["msg"]).removeprefix("Value error, ")
            problems.append(f"{where}: {message}" if where else message)
        return problems
    return []
