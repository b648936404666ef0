"""Bodies of the interactive apps and sessions routes."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field


class NumberOut(BaseModel):
    default: int
    min: int
    max: int


class AppFormOut(BaseModel):
    cores: NumberOut
    memory_gb: NumberOut
    time_minutes: NumberOut
    gpus: NumberOut = Field(description="max 0: the app takes no GPUs.")


class AppOut(BaseModel):
    name: str
    title: str
    description: str
    form: AppFormOut


class LaunchIn(BaseModel):
    """Numbers left out take the app's defaults (``GET /api/v1/apps``)."""

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "examples": [{"app": "jupyterlab", "project_id": 1, "cores": 1, "memory_gb": 1}]
        },
    )

    app: str = Field(max_length=32)
    project_id: int = Field(ge=1, le=2**31 - 1)
    cores: int | None = Field(default=None, ge=0, le=100_000)
    memory_gb: int | None = Field(default=None, ge=0, le=100_000)
    time_minutes: int | None = Field(default=None, ge=0, le=1_000_000)
    gpus: int | None = Field(default=None, ge=0, le=1024)
    partition: str | None = Field(default=None, max_length=64)
    work_dir: str | None = Field(default=None, max_length=1024)
    modules: str = Field(default="", max_length=1000)
    venv: str = Field(default="", max_length=1024)


class SessionOut(BaseModel):
    id: int
    app: str
    title: str
    state: Literal["queued", "starting", "running", "ended"] = Field(
        description="queued: waiting for a node; starting: the server is starting; running: "
        "Connect works; ended: its job has ended."
    )
    job_id: int
    slurm_job_id: str | None
    node: str | None
    created_at: datetime
    started_at: datetime | None
    seconds_left: int | None = Field(description="Until the job's time limit, once it runs.")
    connect_url: str | None = Field(
        description="Open in a browser signed in to the portal, once the session runs."
    )
    values: dict[str, Any] = Field(description="What it was launched with.")
    end_requested: bool = Field(
        default=False,
        description="You asked to end it: it is ending, or ended by you (its job cancelled).",
    )
    idle_since: datetime | None = Field(
        default=None,
        description="Set while you are warned that it will be ended for idleness: nobody "
        "has used it since then.",
    )
    idle_ends_at: datetime | None = Field(
        default=None,
        description="When it will be ended if nobody uses it; POST .../keep starts the clock "
        "again.",
    )
    ended_idle: bool = Field(
        default=False, description="The portal ended it: nobody had used it for its idle limit."
    )


class ViewerIn(BaseModel):
    login: str = Field(
        min_length=1, max_length=200, description="The portal login of who may watch."
    )


class ViewerOut(BaseModel):
    id: int = Field(description="Give it to DELETE .../viewers/{id} to revoke.")
    login: str
    display_name: str
