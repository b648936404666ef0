"""Jobs on the real LSF cluster whose names pass for fields in bjobs -l: alice names one
``x>, Job <B>, User <bob>, Status <DONE`` (B is bob's job) and another ``y>, Command <z``.
The adapter's queue lists the jobs bjobs -w lists, each with its own id, owner and status.

A folder whose name holds a line feed forges whole records too; OpenLava also writes it
into its event log as is, which breaks that log's line, so that case is read from a
recording (tests/unit/scheduler/lsf/test_bjobs_free_text.py), not made on the shared
cluster."""

from __future__ import annotations

import re
import uuid
from collections.abc import AsyncIterator

import pytest

from app.scheduler.base import SchedulerAdapter
from app.scheduler.registry import build_adapter
from app.scheduler.states import JobState
from tests.lsf_cluster import lsf_config, run_on_lsf

pytestmark = pytest.mark.lsf


@pytest.fixture
async def adapter() -> AsyncIterator[SchedulerAdapter]:
    built = build_adapter(lsf_config())
    yield built
    await built.close()


def _bsub(user: str, folder: str, name: str) -> str:
    done = run_on_lsf(
        ["runuser", "-u", user, "--", "sh", "-c", 'cd "$1" && shift && exec "$@"', "bsub",
         folder, "bsub", "-H", "-J", name, "-o", "/dev/null", "sleep", "60"]
    )  # fmt: skip
    found = re.search(r"Job <(\d+)>", done.stdout)
    assert found, done.stdout + done.stderr
    return found[1]


def _wide_ids() -> set[str]:
    lines = run_on_lsf(["bjobs", "-w", "-a", "-u", "all"]).stdout.split("\n")[1:]
    return {line.split()[0] for line in lines if line.strip()}


async def test_free_text_never_passes_for_another_jobs_record(adapter: SchedulerAdapter) -> None:
    tag = uuid.uuid4().hex[:8]
    victim = _bsub("bob", "/tmp", f"victim-{tag}")
    jobs = [
        victim,
        _bsub("alice", "/tmp", f"x>, Job <{victim}>, User <bob>, Status <DONE"),
        _bsub("alice", "/tmp", "y>, Command <z"),
    ]
    try:
        before = _wide_ids()
        listed = await adapter.queue()
        after = _wide_ids()
        ids = {job.job_id for job in listed}
        # Other tests' jobs may come and go between the readings: none may be invented, and
        # none listed before and after may be missing.
        assert before & after <= ids <= before | after
        assert set(jobs) <= ids
        by_id = {job.job_id: job for job in listed}
        assert (by_id[victim].user, by_id[victim].state) == ("bob", JobState.QUEUED_HELD)
        for job_id in jobs[1:]:
            assert (by_id[job_id].user, by_id[job_id].state) == ("alice", JobState.QUEUED_HELD)
    finally:
        run_on_lsf(["bkill", *jobs])
