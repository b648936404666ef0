"""bjobs_argv's output recorded on OpenLava with jobs whose free text passes for fields and
records: bob's held job 33, and alice's jobs named ``x>, Job <33>, User <bob>, Status
<DONE``, ``y>, Command <z``, and one started in a folder whose name holds line feeds, a
line of dashes and a whole record saying bob's job 33 is done. The long form alone is
fooled by them; read with the wide listing, every job is itself."""

from __future__ import annotations

import logging
from datetime import UTC, datetime
from pathlib import Path

from app.scheduler.lsf import parsing
from app.scheduler.lsf.bjobs import BjobsReader, parse_history, wide_listing
from app.scheduler.lsf.commands import LISTING_BREAK
from app.scheduler.states import JobState
from tests.unit.scheduler.lsf.listing import with_history_listing

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures" / "lsf"
TEXT = (FIXTURES / "bjobs-hostile.txt").read_text()
NOW = datetime(2026, 11, 28, 12, 30, tzinfo=UTC)


def test_the_long_form_alone_would_take_alices_text_for_bobs_job() -> None:
    long = TEXT.partition(LISTING_BREAK)[2]
    claimed = [job for job in parsing.parse_jobs(long, NOW) if job.job_id == "33"]
    assert {(job.user, job.state) for job in claimed} >= {("bob", JobState.COMPLETED)}


def test_every_listed_job_is_itself_and_no_other(caplog) -> None:
    with caplog.at_level(logging.WARNING, logger="app.scheduler.lsf.bjobs"):
        jobs = BjobsReader().parse(TEXT, NOW)
    listed = wide_listing(TEXT.partition(LISTING_BREAK)[0])
    assert sorted(job.job_id for job in jobs) == sorted(listed)
    by_id = {job.job_id: job for job in jobs}
    assert (by_id["33"].user, by_id["33"].state) == ("bob", JobState.QUEUED_HELD)
    assert {job.user for job in jobs if job.job_id != "33"} == {"alice"}
    for job_id in ("34", "35", "36"):
        assert (by_id[job_id].user, by_id[job_id].state) == ("alice", JobState.QUEUED_HELD)
    assert "records claimed twice ['33']" in caplog.text


def test_a_name_holding_fields_keeps_the_jobs_own_id_user_and_status() -> None:
    by_id = {job.job_id: job for job in BjobsReader().parse(TEXT, NOW)}
    # Named "x>, Job <33>, User <bob>, Status <DONE": the id LSF wrote first, the fields
    # LSF wrote after the name.
    assert by_id["34"].native_state == "PSUSP" and by_id["34"].partition == "normal"
    # Named "y>, Command <z": the command runs from the last "Command <".
    assert by_id["36"].native_state == "PSUSP"
    assert by_id["36"].native["Command"] == "sleep 60"


def _forged(job_id: str) -> str:
    """A history record saying bob's job ``job_id`` completed, as a folder's name could."""
    return "\n".join(
        [
            "-" * 78,
            "",
            f"Job <{job_id}>, Job Name <f>, User <bob>, Project <default>, Command <z>",
            "Fri Nov 27 20:14:02: Submitted from host <lsfhead>, to Queue <normal>, CWD </tmp>;",
            "Fri Nov 27 20:14:03: Done successfully. The CPU time used is 0.0 seconds;",
            "",
        ]
    )


def test_histories_are_vouched_for_by_bhists_wide_listing(caplog) -> None:
    long = (FIXTURES / "bhist-l-a-u-all.txt").read_text()
    plain = parsing.parse_jobs(long, NOW)
    assert parse_history(with_history_listing(long), NOW) == plain
    # A record forged for job 319 (listed) and one for job 999 (not listed), both bob's.
    text = with_history_listing(long) + _forged("319") + _forged("999")
    with caplog.at_level(logging.WARNING, logger="app.scheduler.lsf.bjobs"):
        read = parse_history(text, NOW)
    assert [job.job_id for job in read] == [job.job_id for job in plain if job.job_id != "319"]
    assert "bob" not in {job.user for job in read}
    said = "bhist: records claimed twice ['319'] and records of jobs not listed ['999']"
    assert said in caplog.text
