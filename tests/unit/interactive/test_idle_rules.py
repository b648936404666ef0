"""What a probe's answer means for a session, as a table: in use, warned once, ended."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from app.interactive.idle_rules import Decision, IdleState, Limits, Verdict, decide

T0 = datetime(2026, 11, 27, 14, 2, tzinfo=UTC)
HOUR = Limits(limit=timedelta(minutes=60), warning=timedelta(minutes=15))


def at(minutes: float) -> datetime:
    return T0 + timedelta(minutes=minutes)


@pytest.mark.parametrize(
    ("last_active", "state", "now", "expected"),
    [
        # The probe could not tell: nothing is decided.
        (None, IdleState(), at(500), Decision(Verdict.UNKNOWN)),
        (T0, IdleState(), at(10), Decision(Verdict.IN_USE, T0, at(60))),
        # 15 minutes before the end, once per idle spell.
        (T0, IdleState(), at(45), Decision(Verdict.WARN, T0, at(60))),
        (T0, IdleState(warned_at=at(45)), at(50), Decision(Verdict.WARNED, T0, at(60))),
        (T0, IdleState(warned_at=at(45)), at(60), Decision(Verdict.END, T0, at(60))),
        # A warning of an earlier spell does not count for this one.
        (at(50), IdleState(warned_at=at(45)), at(96), Decision(Verdict.WARN, at(50), at(111))),
        # Never ended unwarned: a late check warns, and leaves the whole warning.
        (T0, IdleState(), at(70), Decision(Verdict.WARN, T0, at(85))),
        (
            T0,
            IdleState(warned_at=at(70), ends_at=at(85)),
            at(80),
            Decision(Verdict.WARNED, T0, at(85)),
        ),
        (
            T0,
            IdleState(warned_at=at(70), ends_at=at(85)),
            at(85),
            Decision(Verdict.END, T0, at(85)),
        ),
        # "Keep it" starts the clock again, whatever the app says.
        (
            T0,
            IdleState(kept_at=at(50), warned_at=at(45)),
            at(61),
            Decision(Verdict.IN_USE, at(50), at(110)),
        ),
        # Activity after "Keep it" counts from the activity.
        (at(70), IdleState(kept_at=at(50)), at(80), Decision(Verdict.IN_USE, at(70), at(130))),
    ],
)
def test_decide(
    last_active: datetime | None, state: IdleState, now: datetime, expected: Decision
) -> None:
    assert decide(last_active, state, HOUR, now) == expected


def test_a_warning_longer_than_the_limit_warns_as_soon_as_the_session_is_idle() -> None:
    short = Limits(limit=timedelta(seconds=40), warning=timedelta(minutes=15))
    decision = decide(T0, IdleState(), short, T0)
    assert decision == Decision(Verdict.WARN, T0, T0 + timedelta(seconds=40))
