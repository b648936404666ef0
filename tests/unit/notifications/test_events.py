"""Which job state changes are the "started", "ended" and "failed" events."""

from __future__ import annotations

import pytest

from app.notifications.events import events_for


@pytest.mark.parametrize(
    ("from_state", "to_state", "has_start", "expected"),
    [
        ("pending", "running", True, ["started"]),
        ("held", "running", True, ["started"]),
        ("undetermined", "completing", True, ["started"]),
        ("running", "completing", True, []),
        ("running", "completed", True, ["ended"]),
        ("completing", "failed", True, ["ended", "failed"]),
        ("running", "cancelled", True, ["ended"]),
        ("running", "timeout", True, ["ended", "failed"]),
        ("running", "out_of_memory", True, ["ended", "failed"]),
        ("running", "node_fail", True, ["ended", "failed"]),
        ("running", "preempted", True, ["ended", "failed"]),
        # A short job that started and ended between two cycles.
        ("pending", "completed", True, ["started", "ended"]),
        ("pending", "failed", True, ["started", "ended", "failed"]),
        # Cancelled while waiting: it never ran.
        ("pending", "cancelled", False, ["ended"]),
        ("submitting", "submit_failed", False, []),
        ("running", "running", True, []),
        ("suspended", "running", True, []),
        ("pending", "held", False, []),
        ("completed", "completed", True, []),
    ],
)
def test_state_change_events(
    from_state: str, to_state: str, has_start: bool, expected: list[str]
) -> None:
    assert events_for(from_state, to_state, has_start_time=has_start) == expected
