"""Why a job ended: a machine-readable cause and a plain sentence, the same on every surface.

The cause comes from what Slurm recorded (state, exit code, signal) and from what the job
used against what it asked for, so an out-of-memory kill that Slurm reports as ``FAILED``
with signal 9 is still called one.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from app.jobs import states
from app.models import Job

MEMORY_KILL_SHARE = 0.9
# slurmstepd could not start the batch script (on Slurm 22.05, typically a missing
# --output/--error folder); the job ends FAILED with this "signal".
LAUNCH_FAILURE_SIGNAL = 53

_SIGNALS = {
    6: "it aborted (SIGABRT)",
    9: "it was killed (SIGKILL)",
    11: "it crashed with a segmentation fault (SIGSEGV)",
    15: "it was asked to stop (SIGTERM)",
}
_EXIT_CODES = {
    126: "a command in the script could not be executed (permission denied)",
    127: "a command in the script was not found",
}


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
        return f"{megabytes / 1024:.1f} GB"
    return f"{megabytes:.0f} MB"


def requested_memory_mb(job: Job) -> int | None:
    return job.memory_mb or job.alloc_mem_mb


def used_memory_mb(job: Job) -> float | None:
    return job.max_rss_bytes / (1024 * 1024) if job.max_rss_bytes is not None else None


def is_memory_kill(job: Job) -> bool:
    """OUT_OF_MEMORY, or killed by signal 9 while close to (or over) the memory requested."""
    if job.state == "out_of_memory":
        return True
    used, asked = used_memory_mb(job), requested_memory_mb(job)
    if job.exit_signal != 9 or used is None or not asked:
        return False
    return used >= asked * MEMORY_KILL_SHARE


def _time_limit_words(job: Job) -> str:
    if job.time_limit_minutes:
        return f"its time limit ({format_seconds(job.time_limit_minutes * 60)}) was reached"
    ran = format_seconds(job.elapsed_seconds)
    return f"the partition's default time limit was reached after {ran}"


def _fixed(job: Job) -> Ending | None:
    table = {
        "timeout": (EndCause.TIME_LIMIT, f"Ran out of time: {_time_limit_words(job)}."),
        "cancelled": (EndCause.CANCELLED, "Cancelled before it finished."),
        "node_fail": (EndCause.NODE_FAIL, "The node it ran on failed. Resubmitting usually works."),
        "boot_fail": (
            EndCause.BOOT_FAIL,
            "The node it was given did not start. Resubmitting usually works.",
        ),
        "preempted": (EndCause.PREEMPTED, "Stopped to make room for a higher-priority job."),
        "deadline": (EndCause.DEADLINE, "It could not finish before its deadline."),
        "submit_failed": (
            EndCause.SUBMIT_FAILED,
            f"The cluster refused it: {job.submit_error or 'no reason given'}",
        ),
    }
    found = table.get(job.state)
    return Ending(*found) if found else None


def _failure(job: Job) -> Ending:
    if job.exit_signal == LAUNCH_FAILURE_SIGNAL:
        return Ending(
            EndCause.LAUNCH_FAILED,
            "Slurm could not start the script, so it never ran. The usual cause is an "
            "--output or --error folder that does not exist; check the paths.",
        )
    if job.exit_signal:
        what = _SIGNALS.get(job.exit_signal, f"it was stopped by signal {job.exit_signal}")
        return Ending(EndCause.SIGNAL, f"The job ended because {what}.")
    if job.exit_code:
        detail = _EXIT_CODES.get(job.exit_code, "a command in the script failed")
        return Ending(
            EndCause.EXIT_CODE,
            f"The script exited with code {job.exit_code}: {detail}. Check the error output.",
        )
    return Ending(EndCause.EXIT_CODE, "The job failed. Check its error output.")


def ending(job: Job) -> Ending | None:
    """Why ``job`` ended; None while it has not."""
    if not states.is_terminal(job.state):
        return None
    if is_memory_kill(job):
        used, asked = format_mb(used_memory_mb(job)), format_mb(requested_memory_mb(job))
        return Ending(
            EndCause.OUT_OF_MEMORY,
            f"Killed for using more memory than requested (used {used} of {asked}).",
        )
    fixed = _fixed(job)
    if fixed is not None:
        return fixed
    if job.state == "completed" and not job.exit_code and not job.exit_signal:
        return Ending(EndCause.COMPLETED, "Finished successfully.")
    return _failure(job)
