"""Request and response bodies of /api/v1, with the examples shown in the OpenAPI schema."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from app.api.v1.dependency_schemas import DependsOnIn
from app.api.v1.params import MAX_ID
from app.jobs.end_causes import EndCause
from app.vocabulary.job_states import JobStateName


class ErrorOut(BaseModel):
    model_config = ConfigDict(
        json_schema_extra={"examples": [{"error": "NotFound", "detail": "No such job."}]}
    )

    error: str = Field(description="The kind of error, e.g. NotFound or ValidationFailed.")
    detail: str = Field(description="A message that can be shown to a person.")
    fields: dict[str, str] | None = Field(
        default=None, description="Per-field messages (ValidationFailed only)."
    )
    kind: str | None = Field(default=None, description="Why Slurm refused (SubmitRejected only).")
    raw: str | None = Field(default=None, description="Slurm's own text (SubmitRejected only).")


ERROR_RESPONSES: dict[int | str, dict[str, Any]] = {
    status: {"model": ErrorOut, "description": text}
    for status, text in (
        (400, "Malformed request"),
        (401, "Missing, invalid, expired or revoked token"),
        (403, "The token's scopes or the user's role do not allow this"),
        (404, "Not found, or not visible to this user"),
        (409, "Not possible in the current state"),
        (422, "Invalid values, or refused by the cluster"),
        (503, "The cluster cannot be reached"),
    )
}


def errors(
    *codes: int, takes_input: bool = True, streams: bool = False
) -> dict[int | str, dict[str, Any]]:
    """The error answers one route can give: always 401 and 403 (token and scope), 422 when
    it takes parameters or a body, and ``codes``. Errors are JSON even on a route that
    ``streams`` events (the framework would file them under the stream's media type)."""
    wanted = {401, 403, *codes} | ({422} if takes_input else set())
    if not streams:
        return {code: ERROR_RESPONSES[code] for code in sorted(wanted)}
    schema = {"$ref": "#/components/schemas/ErrorOut"}
    return {
        code: {
            "description": ERROR_RESPONSES[code]["description"],
            "content": {"application/json": {"schema": schema}},
        }
        for code in sorted(wanted)
    }


class MeOut(BaseModel):
    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "id": 3,
                    "login": "alice",
                    "display_name": "Alice",
                    "email": "alice@example.org",
                    "is_site_admin": False,
                    "scopes": ["read", "submit"],
                    "cluster_usernames": {"testcluster": "alice"},
                }
            ]
        }
    )

    id: int
    login: str
    display_name: str
    email: str | None
    is_site_admin: bool
    scopes: list[str]
    cluster_usernames: dict[str, str]


class ProjectOut(BaseModel):
    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "id": 1,
                    "name": "Physics",
                    "cluster": "testcluster",
                    "slurm_account": "physics",
                    "description": "",
                    "role": "member",
                }
            ]
        }
    )

    id: int
    name: str
    cluster: str
    slurm_account: str
    description: str
    role: str | None


class MemberOut(BaseModel):
    user_id: int
    login: str
    display_name: str
    role: str


class TemplateVersionOut(BaseModel):
    id: int
    version: int
    script: str
    parameter_schema: dict[str, Any]
    defaults: dict[str, Any]
    change_note: str
    created_at: datetime


class TemplateOut(BaseModel):
    id: int
    name: str
    description: str
    scope: str
    project_id: int | None
    owner_user_id: int
    current_version: int | None
    is_archived: bool


class TemplateDetailOut(TemplateOut):
    version: TemplateVersionOut | None


class TemplateListOut(BaseModel):
    items: list[TemplateOut]


class TemplateIn(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "examples": [
                {
                    "name": "hello",
                    "description": "Prints a greeting",
                    "scope": "personal",
                    "script": "#!/bin/bash\necho hello {{ who }}\n",
                    "parameter_schema": {
                        "parameters": [
                            {"name": "who", "label": "Who", "type": "text", "default": "world"}
                        ]
                    },
                    "defaults": {},
                    "change_note": "first version",
                }
            ]
        },
    )

    name: str = Field(max_length=200)
    description: str = Field(default="", max_length=5000)
    scope: Literal["personal", "project", "site"] = "personal"
    project_id: int | None = Field(default=None, ge=1, le=MAX_ID)
    script: str = Field(max_length=100_000)
    parameter_schema: dict[str, Any] = Field(default_factory=dict)
    defaults: dict[str, Any] = Field(default_factory=dict)
    change_note: str = Field(default="", max_length=2000)


class SubmitIn(BaseModel):
    """Either a template (id, optional version, parameters) or a raw ``script``."""

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "examples": [
                {"template_id": 4, "parameters": {"who": "world"}, "project_id": 1},
                {
                    "script": "#!/bin/bash\nhostname\n",
                    "name": "where-am-i",
                    "project_id": 1,
                    "partition": "debug",
                    "time_limit_minutes": 5,
                },
            ]
        },
    )

    template_id: int | None = Field(default=None, ge=1, le=MAX_ID)
    template_version: int | None = Field(default=None, ge=1)
    parameters: dict[str, Any] = Field(default_factory=dict)
    project_id: int | None = Field(default=None, ge=1, le=MAX_ID)
    script: str | None = Field(default=None, max_length=100_000)
    name: str | None = Field(default=None, max_length=200)
    partition: str | None = Field(default=None, max_length=64)
    time_limit_minutes: int | None = Field(default=None, ge=1, le=525_600)
    cpus_per_task: int | None = Field(default=None, ge=1, le=4096)
    memory_mb: int | None = Field(default=None, ge=1, le=16_777_216)
    array: str | None = Field(default=None, max_length=255)
    script_name: str | None = Field(
        default=None,
        max_length=200,
        description="With script: its file name, the job name when the script sets none",
    )
    args: list[Annotated[str, Field(max_length=4096)]] = Field(
        default_factory=list,
        max_length=256,
        description="With script: the script's arguments ($1, $2…), as in sbatch job.sh ARG…",
    )
    depends_on: list[DependsOnIn] = Field(
        default_factory=list,
        max_length=4,
        description="Jobs this one waits for; sent to Slurm as --dependency.",
    )


class ResubmitIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    time_limit_minutes: int | None = Field(default=None, ge=1, le=525_600)
    partition: str | None = Field(default=None, max_length=64)
    memory_mb: int | None = Field(default=None, ge=1, le=16_777_216)


class JobOut(BaseModel):
    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "id": 12,
                    "uuid": "0b7c9c1e-3c55-4a43-9f3e-0f6f7c1b8a10",
                    "name": "hello",
                    "state": "completed",
                    "is_finished": True,
                    "cluster": "testcluster",
                    "project_id": 1,
                    "owner_user_id": 3,
                    "slurm_job_id": "42",
                    "exit_code": 0,
                    "reason": None,
                    "partition": None,
                    "chosen_partition": "debug",
                    "template_version_id": 7,
                    "parameters": {"who": "world"},
                    "submitted_at": "2024-05-01T10:00:00Z",
                    "started_at": "2024-05-01T10:00:02Z",
                    "ended_at": "2024-05-01T10:00:03Z",
                    "submit_error": None,
                }
            ]
        }
    )

    id: int
    uuid: str
    name: str
    state: JobStateName
    is_finished: bool
    cluster: str
    project_id: int
    owner_user_id: int
    slurm_job_id: str | None
    exit_code: int | None
    reason: str | None
    partition: str | None = Field(description="The partition asked for; null for the default.")
    chosen_partition: str | None = Field(
        default=None,
        description="The partition Slurm chose to run it in; null until Slurm has said.",
    )
    node_list: str | None = Field(
        default=None, description="The nodes it runs or ran on, as Slurm names them."
    )
    template_version_id: int | None
    parameters: dict[str, Any]
    submitted_at: datetime | None
    array_spec: str | None = Field(default=None, description="An array's task indices.")
    array_parent_id: int | None = Field(default=None, description="A task's array job.")
    array_task_id: int | None = Field(default=None, description="A task's index.")
    retry_of_id: int | None = Field(
        default=None, description="The array whose failed tasks this job runs again."
    )
    submitted_outside: bool = Field(
        default=False, description="Found in the queue; submitted without the portal."
    )
    started_at: datetime | None
    expected_start_at: datetime | None = Field(
        default=None,
        description="Slurm's estimate of when a pending job will start; null otherwise.",
    )
    ended_at: datetime | None
    submit_error: str | None
    exit_signal: int | None = None
    end_cause: EndCause | None = Field(
        default=None, description="Why the job ended, for programs; null while it runs."
    )
    end_explanation: str | None = Field(
        default=None, description="Why the job ended, in plain words; null while it runs."
    )
    time_limit_minutes: int | None = None
    dependency: str | None = Field(
        default=None, description="What it waits for, as Slurm was told (afterok:123)."
    )
    waiting_explanation: str | None = Field(
        default=None,
        description="Why a pending job can never start (its dependency), in plain words.",
    )
    waiting_choices: list[str] = Field(
        default_factory=list,
        description="What its owner can do then: cancel, resubmit_without_dependency.",
    )


class JobPageOut(BaseModel):
    items: list[JobOut]
    next_cursor: str | None = Field(description="Pass as ?cursor= for the next page.")
    next: str | None = Field(description="The URL of the next page, or null on the last one.")


class JobEventOut(BaseModel):
    at: datetime
    from_state: JobStateName | None
    to_state: JobStateName
    reason: str | None
    source: str


class LogChunkOut(BaseModel):
    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "stream": "stdout",
                    "data": "hello world\n",
                    "offset": 0,
                    "next_offset": 12,
                    "size": 12,
                    "eof": True,
                    "is_missing": False,
                }
            ]
        }
    )

    stream: Literal["stdout", "stderr"]
    data: str = Field(description="The bytes read, decoded as UTF-8 (invalid bytes replaced).")
    offset: int = Field(description="Byte offset of the first byte of data.")
    next_offset: int = Field(description="Byte offset to ask for next.")
    size: int = Field(description="The file's size in bytes when read.")
    eof: bool
    is_missing: bool = Field(description="True while the file does not exist (yet).")
