"""Why a job ended: a machine-readable cause and a plain sentence, the same on every surface.

The cause comes from what Slurm recorded (state, exit code, signal) and from what the job
used against what it asked for, so an out-of-memory kill that Slurm reports as ``FAILED``
with signal 9 is still called one.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from app.i18n import _, format_number
from app.jobs import event_notes, states
from app.models.jobs import Job
from app.vocabulary.job_states import JobStateName

MEMORY_KILL_SHARE = 0.9
# slurmstepd could not start the batch script (on Slurm 22.05, typically a missing
# --output/--error folder); the job ends FAILED with this "signal".
LAUNCH_FAILURE_SIGNAL = 53


class EndCause(enum.StrEnum):
    """Why a job ended, for programs (the API's ``end_cause``)."""

    COMPLETED = "completed"
    EXIT_CODE = "exit_code"
    SIGNAL = "signal"
    OUT_OF_MEMORY = "out_of_memory"
    TIME_LIMIT = "time_limit"
    LAUNCH_FAILED = "launch_failed"
    CANCELLED = "cancelled"
    NODE_FAIL = "node_fail"
    BOOT_FAIL = "boot_fail"
    PREEMPTED = "preempted"
    DEADLINE = "deadline"
    SUBMIT_FAILED = "submit_failed"


@dataclass(frozen=True, slots=True)
class Ending:
    cause: EndCause
    explanation: str
    slurm_words: str | None = None
    """Slurm's own words, verbatim at the end of the explanation, when it quotes them."""


def format_seconds(seconds: int | None) -> str:
    """``1-02:03:04`` / ``2:03:04``; an em dash when unknown."""
    if seconds is None:
        return "—"
    days, rest = divmod(int(seconds), 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    clock = f"{hours}:{minutes:02d}:{secs:02d}"
    return f"{days}-{clock}" if days else clock


def format_mb(megabytes: float | None) -> str:
    if megabytes is None:
        return "—"
    if megabytes >= 1024:
        return _("%(amount)s GB", amount=format_number(megabytes / 1024, "#,##0.0"))
    return _("%(amount)s MB", amount=f"{megabytes:.0f}")


def requested_memory_mb(job: Job) -> int | None:
    return job.memory_mb or job.alloc_mem_mb


def used_memory_mb(job: Job) -> float | None:
    return job.max_rss_bytes / (1024 * 1024) if job.max_rss_bytes is not None else None


def is_memory_kill(job: Job) -> bool:
    """OUT_OF_MEMORY, or killed by signal 9 while close to (or over) the memory requested."""
    if job.state == JobStateName.OUT_OF_MEMORY:
        return True
    used, asked = used_memory_mb(job), requested_memory_mb(job)
    if job.exit_signal != 9 or used is None or not asked:
        return False
    return used >= asked * MEMORY_KILL_SHARE


def _out_of_time(job: Job) -> str:
    if job.time_limit_minutes:
        limit = format_seconds(job.time_limit_minutes * 60)
        return _("Ran out of time: its time limit (%(limit)s) was reached.", limit=limit)
    return _(
        "Ran out of time: the partition's default time limit was reached after %(elapsed)s.",
        elapsed=format_seconds(job.elapsed_seconds),
    )


def _not_sent() -> dict[str, str]:
    """Submissions that never reached Slurm: nothing refused them, so they say so."""
    return {
        event_notes.NOT_SENT: _(
            "Not submitted: the cluster could not be reached, so nothing was sent to Slurm. "
            "Submit it again once the cluster answers."
        ),
        event_notes.NOT_ACTING_AS: _(
            "Not submitted: the portal does not act as a service or system account."
        ),
    }


def _refused(job: Job) -> Ending:
    """A submission the cluster refused, with Slurm's words when it gave any."""
    said = job.submit_error
    if not said:
        return Ending(EndCause.SUBMIT_FAILED, _("The cluster refused it: no reason given"))
    if said in _not_sent():
        return Ending(EndCause.SUBMIT_FAILED, _not_sent()[said])
    note = event_notes.portal_note(said)
    reason = said if note is None else note
    explanation = _("The cluster refused it: %(reason)s", reason=reason)
    return Ending(EndCause.SUBMIT_FAILED, explanation, said if note is None else None)


def _fixed(job: Job) -> Ending | None:
    match job.state:
        case JobStateName.SUBMIT_FAILED:
            return _refused(job)
        case JobStateName.TIMEOUT:
            return Ending(EndCause.TIME_LIMIT, _out_of_time(job))
        case JobStateName.CANCELLED:
            return Ending(EndCause.CANCELLED, _("Cancelled before it finished."))
        case JobStateName.NODE_FAIL:
            words = _("The node it ran on failed. Resubmitting usually works.")
            return Ending(EndCause.NODE_FAIL, words)
        case JobStateName.BOOT_FAIL:
            words = _("The node it was given did not start. Resubmitting usually works.")
            return Ending(EndCause.BOOT_FAIL, words)
        case JobStateName.PREEMPTED:
            words = _("Stopped to make room for a higher-priority job.")
            return Ending(EndCause.PREEMPTED, words)
        case JobStateName.DEADLINE:
            return Ending(EndCause.DEADLINE, _("It could not finish before its deadline."))
    return None


def _signal_words(signal: int) -> str:
    known = {
        6: _("The job ended because it aborted (SIGABRT)."),
        9: _("The job ended because it was killed (SIGKILL)."),
        11: _("The job ended because it crashed with a segmentation fault (SIGSEGV)."),
        15: _("The job ended because it was asked to stop (SIGTERM)."),
    }
    return known.get(signal) or _(
        "The job ended because it was stopped by signal %(signal)s.", signal=signal
    )


def _exit_words(code: int) -> str:
    if code == 126:
        return _(
            "The script exited with code %(code)s: a command in the script could not be "
            "executed (permission denied). Check the error output.",
            code=code,
        )
    if code == 127:
        return _(
            "The script exited with code %(code)s: a command in the script was not found. "
            "Check the error output.",
            code=code,
        )
    return _(
        "The script exited with code %(code)s: a command in the script failed. "
        "Check the error output.",
        code=code,
    )


def _failure(job: Job) -> Ending:
    if job.exit_signal == LAUNCH_FAILURE_SIGNAL:
        return Ending(
            EndCause.LAUNCH_FAILED,
            _(
                "Slurm could not start the script, so it never ran. The usual cause is an "
                "%(output)s or %(error)s folder that does not exist; check the paths.",
                output="--output",
                error="--error",
            ),
        )
    if job.exit_signal:
        return Ending(EndCause.SIGNAL, _signal_words(job.exit_signal))
    if job.exit_code:
        return Ending(EndCause.EXIT_CODE, _exit_words(job.exit_code))
    return Ending(EndCause.EXIT_CODE, _("The job failed. Check its error output."))


def ending(job: Job) -> Ending | None:
    """Why ``job`` ended; None while it has not."""
    if not states.is_terminal(job.state):
        return None
    if is_memory_kill(job):
        used, asked = format_mb(used_memory_mb(job)), format_mb(requested_memory_mb(job))
        return Ending(
            EndCause.OUT_OF_MEMORY,
            _(
                "Killed for using more memory than requested (used %(used)s of %(asked)s).",
                used=used,
                asked=asked,
            ),
        )
    fixed = _fixed(job)
    if fixed is not None:
        return fixed
    if job.state == JobStateName.COMPLETED and not job.exit_code and not job.exit_signal:
        return Ending(EndCause.COMPLETED, _("Finished successfully."))
    return _failure(job)
