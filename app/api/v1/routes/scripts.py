"""A job's batch script: the portal's copy, or Slurm's for a job submitted outside it."""

from __future__ import annotations

from typing import Literal

from fastapi import APIRouter
from pydantic import BaseModel, Field

from app.api.v1.deps import Reader
from app.api.v1.params import PathId
from app.api.v1.schemas import errors
from app.deps import RegistryDep, SessionmakerDep
from app.jobs.kept_script import job_script

router = APIRouter(prefix="/jobs", tags=["jobs"])


class JobScriptOut(BaseModel):
    script: str = Field(description="The script byte for byte; empty when Slurm no longer has it.")
    source: Literal["portal", "slurm", "gone"] = Field(
        description="portal: submitted through the portal; slurm: read from Slurm, for a job "
        "submitted outside it; gone: Slurm no longer keeps it."
    )


@router.get(
    "/{job_id}/script",
    response_model=JobScriptOut,
    summary="A job's batch script",
    responses=errors(404, 503),
)
async def get_job_script(
    maker: SessionmakerDep, registry: RegistryDep, principal: Reader, job_id: PathId
) -> JobScriptOut:
    found = await job_script(maker, registry, principal.actor, job_id)
    return JobScriptOut(script=found.text, source=found.source)
