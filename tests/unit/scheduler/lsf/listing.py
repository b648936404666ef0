"""bjobs_argv's and bhist_argv's output for a recorded long form: the wide listing OpenLava
would print first (its columns taken from each record's header), the break, then the
records."""

from __future__ import annotations

from app.scheduler.lsf import long_form
from app.scheduler.lsf.commands import LISTING_BREAK

WIDE_HEADER = "JOBID   USER    STAT  QUEUE      FROM_HOST   EXEC_HOST   JOB_NAME   SUBMIT_TIME"


def wide_row(job_id: str, user: str, status: str, queue: str, name: str = "job") -> str:
    return (
        f"{job_id:<7} {user:<7} {status:<5} {queue:<10} lsfhead        -        {name} Nov 27 20:00"
    )


def with_wide_listing(long_text: str) -> str:
    rows = [WIDE_HEADER]
    for chunk in long_form.chunks(long_text):
        header = long_form.header_fields(chunk.split("\n", 1)[0])
        rows.append(wide_row(header["Job"], header["User"], header["Status"], header["Queue"]))
    return "\n".join(rows) + "\n" + LISTING_BREAK + long_text


HISTORY_HEADER = (
    "Summary of time in seconds spent in various states:\n"
    "JOBID   USER    JOB_NAME  PEND    PSUSP   RUN     USUSP   SSUSP   UNKWN   TOTAL"
)


def with_history_listing(long_text: str) -> str:
    rows = [HISTORY_HEADER]
    for chunk in long_form.chunks(long_text):
        header = long_form.header_fields(chunk.split("\n", 1)[0])
        rows.append(f"{header['Job']:<7} {header['User']:<7} job       1       0       0 0 0 0 1")
    return "\n".join(rows) + "\n" + LISTING_BREAK + long_text
