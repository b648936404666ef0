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
from app.scheduler.lsf.bjobs import BjobsReader, wide_listing
from app.scheduler.lsf.commands import LISTING_BREAK
from app.scheduler.states import JobState

TEXT = (Path(__file__).resolve().parents[3] / "fixtures" / "lsf" / "bjobs-hostile.txt").read_text()
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
