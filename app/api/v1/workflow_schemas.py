"""Workflows in the JSON API: a named graph of steps, its runs and each step's job."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field

from app.api.v1.params import MAX_ID
from app.scheduler.dependencies import DependencyKind
from app.vocabulary.job_states import JobStateName

StepName = Annotated[str, Field(min_length=1, max_length=64)]


class StepIn(BaseModel):
    """A script (with args) or a template (with parameters), and the steps it waits for."""

    model_config = ConfigDict(extra="forbid")

    name: StepName
    script: str | None = Field(default=None, max_length=100_000)
    args: list[Annotated[str, Field(max_length=4096)]] = Field(default_factory=list, max_length=64)
    template_id: int | None = Field(default=None, ge=1, le=MAX_ID)
    parameters: dict[str, Any] = Field(default_factory=dict)
    after: list[StepName] = Field(default_factory=list, max_length=20)
    kind: DependencyKind = Field(
        default=DependencyKind.AFTER_OK,
        description="How it waits for the steps in after: afterok, afterany or afternotok.",
    )


class WorkflowIn(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "examples": [
                {
                    "project_id": 1,
                    "name": "prepare-compute-report",
                    "is_shared": True,
                    "steps": [
                        {"name": "prepare", "script": "#!/bin/bash\n./prepare.sh\n"},
                        {
                            "name": "compute",
                            "script": "#!/bin/bash\n./compute.sh\n",
                            "after": ["prepare"],
                        },
                    ],
                }
            ]
        },
    )

    project_id: int = Field(ge=1, le=MAX_ID)
    name: str = Field(min_length=1, max_length=200)
    steps: list[StepIn] = Field(min_length=1, max_length=20)
    is_shared: bool = Field(default=False, description="Every member of the project sees it.")


class WorkflowOut(BaseModel):
    id: int
    project_id: int
    owner_user_id: int
    name: str
    is_shared: bool
    steps: list[StepIn]
    created_at: datetime


class StepStateOut(BaseModel):
    name: str
    after: list[str]
    kind: DependencyKind
    level: int = Field(description="Its column in the graph: 0 for steps that wait for none.")
    job_id: int | None = Field(description="The portal job of its latest attempt.")
    slurm_job_id: str | None
    state: JobStateName | None = Field(description="null: not submitted in this run yet.")
    attempts: int
    waiting_explanation: str | None = None


class RunOut(BaseModel):
    id: int
    workflow_id: int
    owner_user_id: int
    created_at: datetime
    can_run_again: bool = Field(description="Some step failed or was never submitted.")
    steps: list[StepStateOut]
