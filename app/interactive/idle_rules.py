"""What a probe's answer means for a session: still in use, to be warned, to be ended (pure).

The clock starts at the later of the app's last activity and its owner's last "Keep it";
the owner is warned once per idle spell, ``warning`` before its end, and the session is
ended at ``limit``. A session is never ended without its owner warned of this spell first,
and a warning always leaves them its whole ``warning`` (a check that comes late, after a
restart say, moves the end). A probe that could not tell decides nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum


class Verdict(StrEnum):
    UNKNOWN = "unknown"
    IN_USE = "in_use"
    WARN = "warn"
    WARNED = "warned"
    END = "end"


@dataclass(frozen=True, slots=True)
class Limits:
    """How long a session may stay idle, and how long before its end its owner is told."""

    limit: timedelta
    warning: timedelta

    @property
    def warn_after(self) -> timedelta:
        return max(timedelta(0), self.limit - self.warning)


@dataclass(frozen=True, slots=True)
class IdleState:
    """What the session's row says of its idleness."""

    kept_at: datetime | None = None
    warned_at: datetime | None = None
    # The end the warning announced.
    ends_at: datetime | None = None


@dataclass(frozen=True, slots=True)
class Decision:
    verdict: Verdict
    idle_since: datetime | None = None
    ends_at: datetime | None = None


def decide(
    last_active: datetime | None, state: IdleState, limits: Limits, now: datetime
) -> Decision:
    if last_active is None:
        return Decision(Verdict.UNKNOWN)
    since = max(last_active, state.kept_at) if state.kept_at is not None else last_active
    ends_at = since + limits.limit
    if state.warned_at is not None and state.warned_at >= since:
        ends_at = max(ends_at, state.ends_at or ends_at)
        return Decision(Verdict.END if now >= ends_at else Verdict.WARNED, since, ends_at)
    if now < since + limits.warn_after:
        return Decision(Verdict.IN_USE, since, ends_at)
    return Decision(Verdict.WARN, since, max(ends_at, now + min(limits.warning, limits.limit)))
