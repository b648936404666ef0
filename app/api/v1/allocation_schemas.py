"""A project's allocation and its burn-down in the JSON API."""

from __future__ import annotations

from datetime import date
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from app.reports.allocation import Burndown


class BurndownDayOut(BaseModel):
    day: date
    used_cpu_minutes: float = Field(description="CPU minutes used up to the end of this day.")


class AllocationOut(BaseModel):
    project_id: int
    allocation_cpu_minutes: int | None = Field(description="null: the project has none.")
    source: Literal["scheduler", "administrator"] | None = Field(
        description="scheduler: Slurm's GrpTRESMins on the account; administrator: entered."
    )
    used_cpu_minutes: float
    remaining_cpu_minutes: float | None
    used_fraction: float | None
    cpu_minutes_per_day: float = Field(description="The rate over the last 7 days.")
    runs_out_on: date | None = Field(description="At the current rate; null when unused.")
    days: list[BurndownDayOut]


class AllocationIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    cpu_minutes: int | None = Field(
        ge=1, le=10**15, description="null removes the entered allocation."
    )


def allocation_out(found: Burndown) -> AllocationOut:
    return AllocationOut(
        project_id=found.project.id,
        allocation_cpu_minutes=found.limit_minutes,
        source=found.source,
        used_cpu_minutes=round(found.used_minutes, 2),
        remaining_cpu_minutes=found.remaining_minutes,
        used_fraction=found.used_fraction,
        cpu_minutes_per_day=round(found.per_day, 2),
        runs_out_on=found.runs_out_on,
        days=[BurndownDayOut(day=day, used_cpu_minutes=round(used, 2)) for day, used in found.days],
    )


class AllocationCheckOut(BaseModel):
    fits: bool = Field(description="false: the job may use more than is left of the allocation.")
    requested_cpu_minutes: int | None = Field(
        description="Its time limit on every CPU it asks for; null: the partition's default."
    )
    warning: str | None = Field(description="What to tell the submitter, in their language.")
