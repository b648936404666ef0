"""The notes a job's history keeps, stored in English and put in the reader's language when shown.

The poller and the jobs service write these notes outside any reader's request, so the
database keeps them in English (the API returns them as they are). Other notes are Slurm's
own words (a pending reason, a refusal) or a script check's, which are shown verbatim.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from app.i18n import _, ngettext

SUBMISSION_STARTED = "submission started"
SUBMITTED_OUTSIDE = "submitted outside the portal"
FOUND_BY_SUBMISSION_ID = "found by its submission id"
NO_SLURM_JOB = "no Slurm job carries this submission's id"
MISSING = "Slurm no longer reports this job; its end state is unknown"
NOT_SENT = "the cluster could not be reached, so nothing was submitted"
NOT_ACTING_AS = "the portal does not act as a service or system account"
WARNING_PREFIX = "warning: "

_SUBMITTED_AS = re.compile(r"submitted as Slurm job (\S+)")
_REQUESTED = re.compile(r"(cancel|hold|release) requested by (\S+)")
_TASKS_ENDED = re.compile(r"(\d+) tasks ended; (\d+) completed")
_ENDED_IDLE = re.compile(r"ended: idle for (\d+) (minutes|seconds)")


def submitted_as(slurm_job_id: str) -> str:
    return f"submitted as Slurm job {slurm_job_id}"


def requested(action: str, login: str) -> str:
    return f"{action} requested by {login}"


def tasks_ended(total: int, completed: int) -> str:
    """An array's end, when the last of its tasks ended."""
    return f"{total} tasks ended; {completed} completed"


def ended_idle(seconds: int) -> str:
    """An interactive session ended by the portal: nobody had used it for this long."""
    if seconds % 60 == 0:
        return f"ended: idle for {seconds // 60} minutes"
    return f"ended: idle for {seconds} seconds"


def _ended_idle(number: int, unit: str) -> str:
    if unit == "minutes":
        return ngettext("Ended: idle for %(num)s minute", "Ended: idle for %(num)s minutes", number)
    return ngettext("Ended: idle for %(num)s second", "Ended: idle for %(num)s seconds", number)


def _tasks_ended(total: int, completed: int) -> str:
    ended = ngettext("%(num)s task ended", "%(num)s tasks ended", total)
    done = ngettext("%(num)s completed", "%(num)s completed", completed)
    return _("%(ended)s; %(completed)s", ended=ended, completed=done)


def cancelled_by(note: str | None) -> str | None:
    """Whose cancel a note records, if it records one."""
    found = _REQUESTED.fullmatch(note or "")
    return found[2] if found and found[1] == "cancel" else None


def _fixed() -> dict[str, str]:
    return {
        SUBMISSION_STARTED: _("submission started"),
        SUBMITTED_OUTSIDE: _("submitted outside the portal"),
        FOUND_BY_SUBMISSION_ID: _("found by its submission id"),
        NO_SLURM_JOB: _("no Slurm job carries this submission's id"),
        MISSING: _("Slurm no longer reports this job; its end state is unknown"),
        NOT_SENT: _("the cluster could not be reached, so nothing was submitted"),
        NOT_ACTING_AS: _("the portal does not act as a service or system account"),
    }


def _request(action: str, login: str) -> str:
    if action == "cancel":
        return _("cancel requested by %(login)s", login=login)
    if action == "hold":
        return _("hold requested by %(login)s", login=login)
    return _("release requested by %(login)s", login=login)


def portal_note(note: str) -> str | None:
    """``note`` in the reader's language when the portal wrote it; None for anyone else's."""
    fixed = _fixed().get(note)
    if fixed is not None:
        return fixed
    if found := _SUBMITTED_AS.fullmatch(note):
        return _("submitted as Slurm job %(id)s", id=found[1])
    if found := _REQUESTED.fullmatch(note):
        return _request(found[1], found[2])
    if found := _TASKS_ENDED.fullmatch(note):
        return _tasks_ended(int(found[1]), int(found[2]))
    if found := _ENDED_IDLE.fullmatch(note):
        return _ended_idle(int(found[1]), found[2])
    return None


@dataclass(frozen=True, slots=True)
class ShownNote:
    """A history note: the portal's words, then anyone else's quoted as they are."""

    words: str
    quoted: str = ""


def shown_note(note: str | None) -> ShownNote | None:
    if not note:
        return None
    if note.startswith(WARNING_PREFIX):
        return ShownNote(_("warning:"), note.removeprefix(WARNING_PREFIX))
    words = portal_note(note)
    return ShownNote(words) if words is not None else ShownNote("", note)
