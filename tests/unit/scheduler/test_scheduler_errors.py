import pytest

from app.scheduler.errors import (
    JobNotFound,
    PermissionDenied,
    RejectKind,
    classify_control_error,
    classify_rest_errors,
    classify_sbatch_error,
)


@pytest.mark.parametrize(
    ("fixture", "kind"),
    [
        ("sbatch-error-invalid-account.txt", RejectKind.INVALID_ACCOUNT),
        ("sbatch-error-invalid-partition.txt", RejectKind.INVALID_PARTITION),
        ("sbatch-error-bad-directive.txt", RejectKind.BAD_DIRECTIVE),
        ("sbatch-error-bad-gres.txt", RejectKind.UNAVAILABLE_RESOURCES),
    ],
)
def test_recorded_sbatch_refusals_are_classified(recorded, fixture: str, kind: RejectKind) -> None:
    raw = recorded.text(fixture)
    error = classify_sbatch_error(raw)
    assert error.kind is kind
    assert error.raw == raw
    assert "sbatch" not in error.message


def test_association_limit_is_not_mistaken_for_a_time_limit() -> None:
    text = (
        "sbatch: error: Batch job submission failed: Job violates accounting/QOS policy "
        "(job submit limit, user's size and/or time limits)"
    )
    assert classify_sbatch_error(text).kind is RejectKind.ASSOCIATION_LIMIT


def test_unknown_refusal_keeps_the_last_error_line() -> None:
    error = classify_sbatch_error("sbatch: error: Something entirely new\n")
    assert error.kind is RejectKind.OTHER
    assert error.message == "Something entirely new"


def test_rest_partition_error_is_classified() -> None:
    errors = [{"error_code": 2000, "error": "Invalid partition name specified"}]
    assert classify_rest_errors(errors).kind is RejectKind.INVALID_PARTITION


def test_permission_text_becomes_permission_denied() -> None:
    text = "scancel: error: Kill job error on job id 5: Access/permission denied"
    assert isinstance(classify_control_error(text), PermissionDenied)


def test_invalid_job_id_becomes_job_not_found() -> None:
    text = "scancel: error: Kill job error on job id 99: Invalid job id specified"
    assert isinstance(classify_control_error(text), JobNotFound)
