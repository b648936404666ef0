"""Why a job ended, as every surface says it: a cause for programs and a sentence for people."""

from __future__ import annotations

import pytest

from app.i18n import use_locale
from app.jobs import event_notes
from app.jobs.end_causes import EndCause, ending
from app.models.jobs import Job


def job(**fields: object) -> Job:
    base: dict[str, object] = {"state": "failed", "exit_code": None, "exit_signal": None}
    return Job(**(base | fields))


@pytest.mark.parametrize(
    ("fields", "cause", "words"),
    [
        ({"state": "completed", "exit_code": 0}, EndCause.COMPLETED, "Finished successfully."),
        ({"exit_code": 3}, EndCause.EXIT_CODE, "The script exited with code 3"),
        ({"exit_code": 127}, EndCause.EXIT_CODE, "a command in the script was not found"),
        ({"exit_signal": 11}, EndCause.SIGNAL, "segmentation fault"),
        ({"exit_code": 0, "exit_signal": 53}, EndCause.LAUNCH_FAILED, "folder that does not exist"),
        (
            {"exit_signal": 9, "memory_mb": 100, "max_rss_bytes": 300 * 1024 * 1024},
            EndCause.OUT_OF_MEMORY,
            "used 300 MB of 100 MB",
        ),
        ({"state": "out_of_memory", "memory_mb": 100}, EndCause.OUT_OF_MEMORY, "more memory"),
        (
            {"state": "timeout", "time_limit_minutes": 90},
            EndCause.TIME_LIMIT,
            "its time limit (1:30:00) was reached",
        ),
        (
            {"state": "timeout", "elapsed_seconds": 600},
            EndCause.TIME_LIMIT,
            "the partition's default time limit was reached after 0:10:00",
        ),
        ({"state": "cancelled"}, EndCause.CANCELLED, "Cancelled"),
        ({"state": "node_fail"}, EndCause.NODE_FAIL, "node it ran on failed"),
        ({"state": "submit_failed", "submit_error": "bad"}, EndCause.SUBMIT_FAILED, "bad"),
    ],
)
def test_each_ending_has_its_cause_and_sentence(
    fields: dict[str, object], cause: EndCause, words: str
) -> None:
    found = ending(job(**fields))
    assert found is not None
    assert found.cause is cause
    assert words in found.explanation


def test_a_running_job_has_no_ending() -> None:
    assert ending(job(state="running")) is None


@pytest.mark.parametrize(
    ("note", "sentence"),
    [
        (
            event_notes.NOT_SENT,
            "Not submitted: the cluster could not be reached, so nothing was sent to Slurm. "
            "Submit it again once the cluster answers.",
        ),
        (
            event_notes.NOT_ACTING_AS,
            "Not submitted: the portal does not act as a service or system account.",
        ),
    ],
)
def test_a_submission_that_never_reached_slurm_does_not_say_the_cluster_refused_it(
    note: str, sentence: str
) -> None:
    found = ending(job(state="submit_failed", submit_error=note))
    assert found is not None and found.cause is EndCause.SUBMIT_FAILED
    assert (found.explanation, found.slurm_words) == (sentence, None)
    with use_locale("fr"):
        french = ending(job(state="submit_failed", submit_error=note))
    assert french is not None and french.explanation.startswith("Non soumis\u00a0: ")
