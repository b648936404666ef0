import pytest

from app.scheduler.states import SLURM_STATE_MAP, JobState, state_from_slurm

EVERY_SLURM_STATE = [
    ("PENDING", "PD", JobState.QUEUED),
    ("CONFIGURING", "CF", JobState.QUEUED),
    ("RUNNING", "R", JobState.RUNNING),
    ("COMPLETING", "CG", JobState.COMPLETING),
    ("SUSPENDED", "S", JobState.SUSPENDED),
    ("PREEMPTED", "PR", JobState.PREEMPTED),
    ("REQUEUED", "RQ", JobState.QUEUED),
    ("REQUEUE_FED", "RF", JobState.QUEUED),
    ("REQUEUE_HOLD", "RH", JobState.QUEUED_HELD),
    ("RESIZING", "RS", JobState.RUNNING),
    ("STOPPED", "ST", JobState.SUSPENDED),
    ("SIGNALING", "SI", JobState.RUNNING),
    ("STAGE_OUT", "SO", JobState.COMPLETING),
    ("RESV_DEL_HOLD", "RD", JobState.QUEUED_HELD),
    ("COMPLETED", "CD", JobState.COMPLETED),
    ("FAILED", "F", JobState.FAILED),
    ("CANCELLED", "CA", JobState.CANCELLED),
    ("TIMEOUT", "TO", JobState.TIMEOUT),
    ("OUT_OF_MEMORY", "OOM", JobState.OUT_OF_MEMORY),
    ("NODE_FAIL", "NF", JobState.NODE_FAIL),
    ("BOOT_FAIL", "BF", JobState.BOOT_FAIL),
    ("DEADLINE", "DL", JobState.DEADLINE),
    ("REVOKED", "RV", JobState.CANCELLED),
    ("SPECIAL_EXIT", "SE", JobState.FAILED),
]


@pytest.mark.parametrize(("long", "short", "expected"), EVERY_SLURM_STATE)
def test_long_and_short_names_map_to_the_same_state(
    long: str, short: str, expected: JobState
) -> None:
    assert state_from_slurm(long) is expected
    assert state_from_slurm(short) is expected


def test_state_map_covers_exactly_the_documented_names() -> None:
    documented = {name for long, short, _ in EVERY_SLURM_STATE for name in (long, short)}
    assert set(SLURM_STATE_MAP) == documented


def test_cancelled_by_uid_is_cancelled() -> None:
    assert state_from_slurm("CANCELLED by 1001") is JobState.CANCELLED


@pytest.mark.parametrize("native", ["", "BOGUS", "LAUNCH_FAILED_SOMEHOW", "completed-ish"])
def test_unknown_state_is_undetermined_never_completed(native: str) -> None:
    state = state_from_slurm(native)
    assert state is JobState.UNDETERMINED
    assert not state.is_terminal


@pytest.mark.parametrize("reason", ["JobHeldUser", "JobHeldAdmin"])
def test_pending_job_held_by_reason_is_queued_held(reason: str) -> None:
    assert state_from_slurm("PENDING", reason) is JobState.QUEUED_HELD


def test_pending_job_waiting_for_resources_is_queued() -> None:
    assert state_from_slurm("PENDING", "Resources") is JobState.QUEUED


def test_flag_suffixes_are_ignored() -> None:
    assert state_from_slurm("RUNNING+") is JobState.RUNNING
    assert state_from_slurm("COMPLETING,STAGE_OUT") is JobState.COMPLETING


def test_terminal_and_active_states_partition_all_but_undetermined() -> None:
    for state in JobState:
        if state is JobState.UNDETERMINED:
            assert not state.is_terminal and not state.is_active
        else:
            assert state.is_terminal != state.is_active
