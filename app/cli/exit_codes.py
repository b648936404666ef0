"""Exit statuses scripts can rely on; documented in ``hpcportal --help`` and ADR 0006."""

from __future__ import annotations

import enum

from app.vocabulary.job_states import JobStateName


class ExitCode(enum.IntEnum):
    OK = 0
    ERROR = 1
    USAGE = 2
    AUTH = 3
    NOT_FOUND = 4
    UNREACHABLE = 5
    JOB_FAILED = 10
    JOB_CANCELLED = 11
    JOB_TIMEOUT = 12
    WAIT_TIMEOUT = 13


EXIT_CODE_HELP = """exit status:
  0   success; for --wait/wait: the job completed
  1   the portal refused the request (invalid values, conflict) or failed
  2   wrong command-line usage
  3   not signed in: missing, invalid, expired or revoked token, or missing scope
  4   not found (or not visible to you)
  5   the portal or the cluster is unreachable
  10  the job failed (non-zero exit, out of memory, node failure, rejected at submit)
  11  the job was cancelled
  12  the job hit its time limit
  13  wait gave up: --timeout elapsed before the job ended
"""

_FINAL_STATE_CODES: dict[str, ExitCode] = {
    JobStateName.COMPLETED: ExitCode.OK,
    JobStateName.CANCELLED: ExitCode.JOB_CANCELLED,
    JobStateName.TIMEOUT: ExitCode.JOB_TIMEOUT,
    JobStateName.DEADLINE: ExitCode.JOB_TIMEOUT,
}


def for_final_state(state: str) -> ExitCode:
    """The exit status for a job that has ended in ``state``; any other end is a failure."""
    return _FINAL_STATE_CODES.get(state, ExitCode.JOB_FAILED)


def for_http_status(status: int) -> ExitCode:
    if status in (401, 403):
        return ExitCode.AUTH
    if status == 404:
        return ExitCode.NOT_FOUND
    if status in (502, 503, 504):
        return ExitCode.UNREACHABLE
    return ExitCode.ERROR
