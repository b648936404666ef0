"""What a submission waits for, in the JSON API."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field

from app.api.v1.params import MAX_ID
from app.scheduler.dependencies import DependencyKind


class DependsOnIn(BaseModel):
    """Wait for earlier jobs of yours (portal ids) on the same cluster."""

    model_config = ConfigDict(extra="forbid")

    kind: DependencyKind = Field(
        description="afterok: after they succeed; afterany: after they end; afternotok: "
        "after they fail; singleton: after your earlier jobs of the same name (no job_ids)."
    )
    job_ids: list[Annotated[int, Field(ge=1, le=MAX_ID)]] = Field(
        default_factory=list, max_length=64
    )
