"""Bodies of GET /api/v1/jobs/{id}/tasks: one page of an array's tasks and what they used."""

from __future__ import annotations

from pydantic import BaseModel, Field

from app.api.v1.schemas import JobOut
from app.jobs.tasks import TaskRollup


class TaskUsageOut(BaseModel):
    """What all of an array's tasks used; limits and requests hold per task."""

    longest_task_seconds: int | None = Field(description="The longest task's elapsed time.")
    ended_tasks_seconds: int | None = Field(description="Elapsed time of ended tasks, summed.")
    cpu_seconds: int | None = Field(description="CPU time of ended tasks, summed.")
    cpu_efficiency_percent: float | None = Field(description="Of ended tasks' CPU capacity.")
    max_rss_bytes: int | None = Field(description="The most memory any task used.")
    cpus_per_task: int | None
    memory_per_task_mb: int | None = Field(description="Asked for, or else allocated, per task.")


class TaskPageOut(BaseModel):
    items: list[JobOut] = Field(description="Tasks in index order (array_task_id).")
    counts: dict[str, int] = Field(description="How many of the array's tasks are in each state.")
    usage: TaskUsageOut = Field(description="What all the array's tasks used, together.")
    next_cursor: str | None = Field(description="Pass as ?cursor= for the next page.")
    next: str | None = Field(description="The URL of the next page, or null on the last one.")


def task_usage_out(used: TaskRollup) -> TaskUsageOut:
    return TaskUsageOut(
        longest_task_seconds=used.longest_seconds,
        ended_tasks_seconds=used.ended_seconds,
        cpu_seconds=used.cpu_seconds,
        cpu_efficiency_percent=used.cpu_efficiency,
        max_rss_bytes=used.max_rss_bytes,
        cpus_per_task=used.cpus_per_task,
        memory_per_task_mb=used.memory_per_task_mb,
    )
