"""Jobs as view-ready values: state badges, plain-word reasons, usage and end explanations.

Templates only print these values; every comparison with a raw Slurm string happens here.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime

from app.jobs import states
from app.jobs.end_causes import (
    ending,
    format_mb,
    format_seconds,
    is_memory_kill,
    requested_memory_mb,
    used_memory_mb,
)
from app.jobs.tasks import TaskRollup
from app.models import Job, JobEvent
from app.templating import local_time

_STATE_LABELS = {
    "submitting": "Submitting",
    "submit_failed": "Submission failed",
    "pending": "Pending",
    "held": "Held",
    "running": "Running",
    "suspended": "Suspended",
    "completing": "Finishing",
    "completed": "Completed",
    "failed": "Failed",
    "cancelled": "Cancelled",
    "timeout": "Out of time",
    "out_of_memory": "Out of memory",
    "node_fail": "Node failed",
    "preempted": "Preempted",
    "boot_fail": "Node did not boot",
    "deadline": "Missed deadline",
    "undetermined": "Unknown",
}
_TONES = {
    "pending": "waiting",
    "held": "waiting",
    "submitting": "waiting",
    "running": "active",
    "completing": "active",
    "suspended": "waiting",
    "completed": "ok",
    "cancelled": "neutral",
    "undetermined": "neutral",
}

PENDING_REASONS = {
    "None": "Just submitted; the scheduler has not looked at it yet.",
    "Resources": "Waiting for enough free CPUs, memory or GPUs to become available.",
    "Priority": "Other jobs with a higher priority are ahead of it in the queue.",
    "JobHeldUser": "On hold by its owner or a manager. Release it to let it start.",
    "JobHeldAdmin": "On hold by a cluster administrator.",
    "AssocGrpCpuLimit": "The project is already using all the CPUs it may use at once; "
    "it starts when some of the project's other jobs finish.",
    "AssocGrpMemLimit": "The project is already using all the memory it may use at once.",
    "AssocGrpGRES": "The project is already using all the GPUs it may use at once.",
    "AssocGrpJobsLimit": "The project has as many running jobs as it is allowed.",
    "AssocMaxJobsLimit": "You have as many running jobs as you are allowed.",
    "QOSMaxWallDurationPerJobLimit": "The time limit is longer than this quality of service "
    "allows, so the job will never start. Cancel it and submit with a shorter time limit.",
    "PartitionTimeLimit": "The time limit is longer than the partition allows, so the job "
    "will never start. Cancel it and submit with a shorter time limit.",
    "QOSMaxCpuPerUserLimit": "You are already using all the CPUs this quality of service "
    "allows per user.",
    "QOSGrpCpuLimit": "Everyone using this quality of service together has reached its CPU limit.",
    "ReqNodeNotAvail": "A node the job needs is unavailable (down, drained or reserved).",
    "Dependency": "Waiting for the jobs it depends on to finish.",
    "DependencyNeverSatisfied": "A job it depends on ended in a way that means this job can "
    "never start. Cancel it.",
    "BeginTime": "It was asked to start later and that time has not come yet.",
    "Reservation": "Waiting for its reservation to start.",
    "PartitionDown": "The partition is down; it starts when an administrator brings it back.",
    "NodeDown": "A node it needs is down.",
    "InvalidAccount": "The account is not valid on this cluster; cancel and resubmit.",
    "InvalidQOS": "The quality of service is not valid; cancel and resubmit.",
    "BadConstraints": "No node matches the constraints it asks for.",
}


@dataclass(frozen=True, slots=True)
class StateBadge:
    state: str
    label: str
    tone: str
    is_terminal: bool


def state_badge(state: str) -> StateBadge:
    tone = _TONES.get(state, "bad")
    label = _STATE_LABELS.get(state, state.replace("_", " ").capitalize())
    return StateBadge(state, label, tone, states.is_terminal(state))


def format_time(moment: datetime | None) -> str:
    """The moment as a ``<time>`` element the pages show in the reader's time zone."""
    return local_time(moment)


def pending_reason(job: Job) -> str | None:
    """The reason a queued job is not running yet, in plain words (None when running)."""
    if job.state not in states.QUEUED_STATES or not job.reason:
        return None
    known = PENDING_REASONS.get(job.reason)
    return known or f"The scheduler says: {job.reason}."


def expected_start(job: Job) -> str | None:
    """Slurm's estimate of a queued job's start, while it is one."""
    if job.state not in states.QUEUED_STATES or job.expected_start_at is None:
        return None
    return format_time(job.expected_start_at)


def end_explanation(job: Job) -> str | None:
    """Why a finished job ended, in plain words; None while it has not ended."""
    found = ending(job)
    return found.explanation if found else None


@dataclass(frozen=True, slots=True)
class Usage:
    """Requested against used, each with a share (0 to 100) for a meter, or None if unknown."""

    elapsed: str
    time_limit: str
    time_share: float | None
    cpu_efficiency: float | None
    cpus: str
    memory_used: str
    memory_requested: str
    memory_share: float | None
    time_note: str = ""
    memory_note: str = ""
    """What the figures are of, where that is not plain (an array's tasks)."""

    @property
    def memory_over(self) -> str | None:
        """How far the job went over the memory it asked for, in words; None within it."""
        if self.memory_share is None or self.memory_share <= 100:
            return None
        return f"used {self.memory_share / 100:.1f} times the memory asked for"


def _share(part: float | None, whole: float | None) -> float | None:
    if part is None or not whole:
        return None
    return round(100 * part / whole, 1)


def cpu_count(cpus: int | None) -> str:
    """``4 CPUs``, ``1 CPU``; a dash when unknown."""
    return f"{cpus} CPU{'' if cpus == 1 else 's'}" if cpus else "—"


def usage(job: Job) -> Usage:
    limit_seconds = job.time_limit_minutes * 60 if job.time_limit_minutes else None
    cpus = job.alloc_cpus or job.cpus
    cpu_seconds_available = job.elapsed_seconds * cpus if job.elapsed_seconds and cpus else None
    total_cpu = job.total_cpu_seconds if job.elapsed_seconds else None
    return Usage(
        elapsed=format_seconds(job.elapsed_seconds),
        time_limit=format_seconds(limit_seconds),
        time_share=_share(job.elapsed_seconds, limit_seconds),
        cpu_efficiency=_share(total_cpu, cpu_seconds_available),
        cpus=cpu_count(cpus),
        memory_used=format_mb(used_memory_mb(job)),
        memory_requested=format_mb(requested_memory_mb(job)),
        memory_share=_share(used_memory_mb(job), requested_memory_mb(job)),
    )


def array_usage(array: Job, tasks: TaskRollup) -> Usage:
    """An array's usage from its tasks': the limits it asked for hold per task."""
    limit_seconds = array.time_limit_minutes * 60 if array.time_limit_minutes else None
    used_mb = None if tasks.max_rss_bytes is None else tasks.max_rss_bytes / 2**20
    asked_mb = tasks.memory_per_task_mb
    together = format_seconds(tasks.ended_seconds) if tasks.ended_seconds else None
    note = "longest task" + (f"; {together} over all ended tasks" if together else "")
    return Usage(
        elapsed=format_seconds(tasks.longest_seconds),
        time_limit=format_seconds(limit_seconds),
        time_share=_share(tasks.longest_seconds, limit_seconds),
        cpu_efficiency=tasks.cpu_efficiency,
        cpus=f"{cpu_count(tasks.cpus_per_task)} per task" if tasks.cpus_per_task else "—",
        memory_used=format_mb(used_mb),
        memory_requested=f"{format_mb(asked_mb)} per task" if asked_mb else "—",
        memory_share=_share(used_mb, asked_mb),
        time_note=note if tasks.longest_seconds is not None else "",
        memory_note="by the task that used the most" if used_mb is not None else "",
    )


@dataclass(frozen=True, slots=True)
class TimelineEntry:
    at: str
    badge: StateBadge
    note: str


def timeline(events: list[JobEvent]) -> list[TimelineEntry]:
    return [
        TimelineEntry(format_time(event.at), state_badge(event.to_state), event.reason or "")
        for event in events
    ]


@dataclass(frozen=True, slots=True)
class Suggestion:
    """What to change when resubmitting a job that ran out of memory or time."""

    field: str
    value: int
    shown: str
    why: str


def more_resources(job: Job, partition_max_minutes: int | None) -> Suggestion | None:
    """1.5 times the memory used for a memory kill; twice the time limit (capped) for a timeout."""
    if is_memory_kill(job):
        base = max(used_memory_mb(job) or 0, requested_memory_mb(job) or 0)
        value = max(1, math.ceil(base * 1.5 / 100) * 100)
        return Suggestion("memory_mb", value, format_mb(value), "one and a half times what it used")
    if job.state == "timeout" and job.time_limit_minutes:
        value = job.time_limit_minutes * 2
        why = "twice its time limit"
        if partition_max_minutes is not None and value > partition_max_minutes:
            value, why = partition_max_minutes, "the longest its partition allows"
        return Suggestion("time_limit_minutes", value, format_seconds(value * 60), why)
    return None
