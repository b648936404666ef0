"""When a failed delivery is tried again: doubling waits, capped, and a last attempt."""

from __future__ import annotations

from datetime import timedelta

MAX_ATTEMPTS = 8
FIRST_WAIT = timedelta(seconds=30)
LONGEST_WAIT = timedelta(hours=1)
# A claim outlives the slowest delivery (SMTP time-out) by far, so only a dispatcher that
# died or stalled loses its rows to another one.
CLAIM_DURATION = timedelta(minutes=2)
SMTP_TIMEOUT_SECONDS = 30.0
WEBHOOK_TIMEOUT_SECONDS = 10.0


def retry_delay(attempts_made: int) -> timedelta | None:
    """The wait before the next attempt, or None when no attempt is left.

    30 s, 1, 2, 4, 8, 16 and 32 minutes: eight attempts over about an hour, enough to ride
    out a receiver's restart or a mail server's maintenance without piling up for days.
    """
    if attempts_made >= MAX_ATTEMPTS:
        return None
    wait: timedelta = FIRST_WAIT * 2 ** max(attempts_made - 1, 0)
    return min(wait, LONGEST_WAIT)
