"""The scheduler-to-portal state map and what each portal state allows."""

from __future__ import annotations

import pytest

from app.jobs import states
from app.models.jobs import JOB_STATES
from app.scheduler.states import JobState
from app.vocabulary.job_states import RENAMED, JobStateName


@pytest.mark.parametrize("scheduler_state", list(JobState))
def test_every_scheduler_state_maps_to_a_stored_portal_state(scheduler_state: JobState) -> None:
    portal = states.portal_state(scheduler_state)
    assert portal in JOB_STATES
    assert states.is_terminal(portal) == scheduler_state.is_terminal


@pytest.mark.parametrize(
    ("scheduler_state", "expected"),
    [
        (JobState.QUEUED, "pending"),
        (JobState.QUEUED_HELD, "held"),
        (JobState.OUT_OF_MEMORY, "out_of_memory"),
        (JobState.UNDETERMINED, "undetermined"),
    ],
)
def test_state_names(scheduler_state: JobState, expected: str) -> None:
    assert states.portal_state(scheduler_state) == expected


def test_undetermined_and_submitting_are_tracked_but_not_terminal() -> None:
    for state in ("undetermined", "submitting"):
        assert states.is_active(state)
        assert not states.is_terminal(state)


def test_submit_failed_is_terminal() -> None:
    assert states.is_terminal("submit_failed")


def test_every_stored_state_is_either_active_or_terminal() -> None:
    for state in JOB_STATES:
        assert states.is_active(state) != states.is_terminal(state), state


@pytest.mark.parametrize(
    ("state", "can_cancel", "can_hold", "can_release"),
    [
        ("pending", True, True, False),
        ("held", True, False, True),
        ("running", True, False, False),
        ("submitting", False, False, False),
        ("completed", False, False, False),
    ],
)
def test_allowed_actions(state: str, can_cancel: bool, can_hold: bool, can_release: bool) -> None:
    assert states.can_cancel(state) == can_cancel
    assert states.can_hold(state) == can_hold
    assert states.can_release(state) == can_release


def test_array_parent_shows_the_most_telling_end() -> None:
    assert states.most_telling_end(["completed", "timeout", "failed"]) == "timeout"
    assert states.most_telling_end(["completed", "completed"]) == "completed"


def test_the_portal_states_are_the_scheduler_states_and_two_of_the_portal_own() -> None:
    """One vocabulary: a scheduler state is never missing from the portal's, and the portal
    adds only the two states before and instead of the scheduler taking the job."""
    from_scheduler = {states.portal_state(state) for state in JobState}
    portal_only = {JobStateName.SUBMITTING, JobStateName.SUBMIT_FAILED}
    assert set(JobStateName) == from_scheduler | portal_only
    assert from_scheduler.isdisjoint(portal_only)
    assert set(JOB_STATES) == {state.value for state in JobStateName}


@pytest.mark.parametrize("scheduler_state", list(JobState))
def test_a_scheduler_state_keeps_its_value_unless_renamed(scheduler_state: JobState) -> None:
    expected = RENAMED.get(scheduler_state, scheduler_state.value)
    assert states.portal_state(scheduler_state) == expected
