"""Jobs as view-ready values: state badges, plain-word reasons, usage and end explanations.

Templates only print these values; every comparison with a raw Slurm string happens here.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import cache

from markupsafe import Markup

from app.i18n import _, current_locale, format_number, ngettext, pgettext
from app.jobs import event_notes, states
from app.jobs.end_causes import (
    ending,
    format_mb,
    format_seconds,
    is_memory_kill,
    requested_memory_mb,
    used_memory_mb,
)
from app.jobs.event_notes import ShownNote, shown_note
from app.jobs.tasks import TaskRollup
from app.models.jobs import Job, JobEvent
from app.scheduler.capabilities import capabilities_of
from app.scheduler.errors import SchedulerError
from app.scheduler.registry import Schedulers
from app.templating import local_time
from app.users.actor import Actor
from app.web.pending_reasons import pending_reasons

_OPTION = re.compile(r"(?<![\w-])--[a-z][a-z-]*")
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


def _state_labels() -> Mapping[str, str]:
    return _state_labels_in(current_locale())


@cache
def _state_labels_in(locale: str) -> Mapping[str, str]:
    """The labels in ``locale`` (the current one when called), worked out once per language:
    a job list asks for one per row."""
    return {
        "submitting": _("Submitting"),
        "submit_failed": _("Submission failed"),
        "pending": _("Pending"),
        "held": _("Held"),
        "running": _("Running"),
        "suspended": _("Suspended"),
        "completing": _("Finishing"),
        "completed": _("Completed"),
        "failed": _("Failed"),
        "cancelled": _("Cancelled"),
        "timeout": _("Out of time"),
        "out_of_memory": _("Out of memory"),
        "node_fail": _("Node failed"),
        "preempted": _("Preempted"),
        "boot_fail": _("Node did not boot"),
        "deadline": _("Missed deadline"),
        "undetermined": _("Unknown"),
    }


@cache
def _task_state_labels_in(locale: str) -> Mapping[str, str]:
    """A task's labels: the same words in English; in French a task (« tâche ») is feminine
    where a job (« travail ») is not, so each label has a task context of its own."""
    return {
        "pending": pgettext("task", "Pending"),
        "held": pgettext("task", "Held"),
        "running": pgettext("task", "Running"),
        "suspended": pgettext("task", "Suspended"),
        "completed": pgettext("task", "Completed"),
        "failed": pgettext("task", "Failed"),
        "cancelled": pgettext("task", "Cancelled"),
        "preempted": pgettext("task", "Preempted"),
    }


@dataclass(frozen=True, slots=True)
class StateBadge:
    state: str
    label: str
    tone: str
    is_terminal: bool


def state_badge(state: str) -> StateBadge:
    tone = _TONES.get(state, "bad")
    label = _state_labels().get(state, state.replace("_", " ").capitalize())
    return StateBadge(state, label, tone, states.is_terminal(state))


def task_state_badge(state: str) -> StateBadge:
    """An array task's badge: its state in a task's words."""
    badge = state_badge(state)
    label = _task_state_labels_in(current_locale()).get(state, badge.label)
    return StateBadge(state, label, badge.tone, badge.is_terminal)


def _verbatim(words: str) -> Markup:
    """Slurm's own words, marked so that nothing translates them."""
    return Markup('<span translate="no">{}</span>').format(words)


def _options_as_code(text: str) -> Markup:
    """``text`` with the sbatch options it names (``--output``) shown as code."""
    shown, start = Markup(), 0
    for option in _OPTION.finditer(text):
        shown += text[start : option.start()] + Markup("<code>{}</code>").format(option[0])
        start = option.end()
    return shown + text[start:]


def quoting(message: str, **words: str) -> Markup:
    """A translated ``message`` whose placeholders are filled with Slurm's words verbatim."""
    return Markup.escape(message) % {name: _verbatim(value) for name, value in words.items()}


def format_time(moment: datetime | None) -> str:
    """The moment as a ``<time>`` element the pages show in the reader's time zone."""
    return local_time(moment)


def pending_reason(job: Job) -> str | None:
    """The reason a queued job is not running yet, in plain words (None when running)."""
    if job.state not in states.QUEUED_STATES or not job.reason:
        return None
    known = pending_reasons().get(job.reason)
    return known or quoting(_("The scheduler says: %(reason)s."), reason=job.reason)


def expected_start(job: Job) -> str | None:
    """Slurm's estimate of a queued job's start, while it is one."""
    if job.state not in states.QUEUED_STATES or job.expected_start_at is None:
        return None
    return format_time(job.expected_start_at)


def end_explanation(job: Job) -> str | None:
    """Why a finished job ended, in plain words; None while it has not ended."""
    found = ending(job)
    if found is None:
        return None
    said = found.slurm_words
    if said and found.explanation.endswith(said):
        return _options_as_code(found.explanation.removesuffix(said)) + _verbatim(said)
    return _options_as_code(found.explanation)


def cancelled_by(job: Job, events: Sequence[JobEvent], actor: Actor) -> str | None:
    """Who ended a cancelled job through the portal, said as the reader knows them."""
    if job.state != "cancelled":
        return None
    for event in reversed(events):
        login = event_notes.cancelled_by(event.reason) if event.source == "user" else None
        if login == actor.login:
            return _("You ended it.")
        if login:
            return _("%(login)s ended it.", login=login)
    return None


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
    cpu_unknown: str = ""
    """Why the CPU efficiency is not shown, when it is not."""

    @property
    def memory_over(self) -> str | None:
        """How far the job went over the memory it asked for, in words; None within it."""
        if self.memory_share is None or self.memory_share <= 100:
            return None
        times = format_number(self.memory_share / 100, "#,##0.0")
        return _("used %(times)s times the memory asked for", times=times)


def _share(part: float | None, whole: float | None) -> float | None:
    if part is None or not whole:
        return None
    return round(100 * part / whole, 1)


def cpu_count(cpus: int | None) -> str:
    """``4 CPUs``, ``1 CPU``; a dash when unknown."""
    return ngettext("%(num)d CPU", "%(num)d CPUs", cpus) if cpus else "—"


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
        cpu_unknown=why_no_cpu_efficiency(job),
    )


def partition_label(schedulers: Schedulers, cluster: str) -> str:
    """What the job's cluster calls the line jobs wait in: a queue on PBS, a partition on
    Slurm (and on a cluster the portal no longer serves)."""
    try:
        adapter = schedulers.get(cluster)
    except SchedulerError:
        return _("Partition")
    return _("Queue") if capabilities_of(adapter).partition_word == "queue" else _("Partition")


def partition_shown(job: Job) -> str:
    """Where the job runs or ran, as Slurm chose it, and whether that was asked for."""
    if job.chosen_partition and not job.partition:
        return _("%(partition)s (the cluster's default)", partition=job.chosen_partition)
    return job.chosen_partition or job.partition or _("the cluster's default")


def why_no_cpu_efficiency(job: Job) -> str:
    """Why a job's CPU efficiency cannot be given (empty when it can, or may soon)."""
    if not states.is_terminal(job.state):
        return _("known once the job has ended")
    if job.started_at is None and not job.elapsed_seconds:
        return _("the job never ran")
    if job.elapsed_seconds == 0:
        return _("it ran for less than a second, too short to measure")
    return _("Slurm's accounting did not report the CPU time it used")


def array_usage(array: Job, tasks: TaskRollup) -> Usage:
    """An array's usage from its tasks': the limits it asked for hold per task."""
    limit_seconds = array.time_limit_minutes * 60 if array.time_limit_minutes else None
    used_mb = None if tasks.max_rss_bytes is None else tasks.max_rss_bytes / 2**20
    asked_mb = tasks.memory_per_task_mb
    note = _("longest task")
    if tasks.ended_seconds:
        together = format_seconds(tasks.ended_seconds)
        note = _("longest task; %(together)s over all ended tasks", together=together)
    return Usage(
        elapsed=format_seconds(tasks.longest_seconds),
        time_limit=format_seconds(limit_seconds),
        time_share=_share(tasks.longest_seconds, limit_seconds),
        cpu_efficiency=tasks.cpu_efficiency,
        cpus=_("%(cpus)s per task", cpus=cpu_count(tasks.cpus_per_task))
        if tasks.cpus_per_task
        else "—",
        memory_used=format_mb(used_mb),
        memory_requested=_("%(memory)s per task", memory=format_mb(asked_mb)) if asked_mb else "—",
        memory_share=_share(used_mb, asked_mb),
        time_note=note if tasks.longest_seconds is not None else "",
        memory_note=_("by the task that used the most") if used_mb is not None else "",
    )


@dataclass(frozen=True, slots=True)
class TimelineEntry:
    at: str
    badge: StateBadge
    note: ShownNote | None


def timeline(events: list[JobEvent]) -> list[TimelineEntry]:
    return [
        TimelineEntry(format_time(event.at), state_badge(event.to_state), shown_note(event.reason))
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
        why = _("one and a half times what it used")
        return Suggestion("memory_mb", value, format_mb(value), why)
    if job.state == "timeout" and job.time_limit_minutes:
        value = job.time_limit_minutes * 2
        why = _("twice its time limit")
        if partition_max_minutes is not None and value > partition_max_minutes:
            value, why = partition_max_minutes, _("the longest its partition allows")
        return Suggestion("time_limit_minutes", value, format_seconds(value * 60), why)
    return None
