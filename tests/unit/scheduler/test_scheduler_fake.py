import pytest

from app.scheduler.base import SchedulerAdapter
from app.scheduler.errors import (
    FileUnavailable,
    PermissionDenied,
    PreflightFailed,
    RejectKind,
    SubmitRejected,
)
from app.scheduler.fake import FakeScheduler
from app.scheduler.states import JobState
from app.scheduler.types import JobSpec

SPEC = JobSpec(script="#!/bin/bash\ntrue\n", name="t", account="physics")


@pytest.fixture
def fake() -> FakeScheduler:
    return FakeScheduler(accounts={"alice": ["physics"], "bob": ["chemistry"]})


def test_fake_implements_the_interface(fake: FakeScheduler) -> None:
    assert isinstance(fake, SchedulerAdapter)


async def test_job_walks_from_queued_to_completed(fake: FakeScheduler) -> None:
    job_id = await fake.submit(SPEC, "alice")
    assert [j.state for j in await fake.queue()] == [JobState.QUEUED]
    fake.start(job_id)
    fake.finish(job_id, exit_code=3)
    assert await fake.queue() == []
    [record] = await fake.accounting([job_id])
    assert (record.state, record.exit_code) == (JobState.FAILED, 3)


async def test_other_users_cannot_cancel(fake: FakeScheduler) -> None:
    job_id = await fake.submit(SPEC, "alice")
    with pytest.raises(PermissionDenied):
        await fake.cancel([job_id], "bob")
    await fake.cancel([job_id], "alice")
    assert fake.jobs[job_id].state is JobState.CANCELLED


async def test_hold_and_release(fake: FakeScheduler) -> None:
    job_id = await fake.submit(SPEC, "alice")
    await fake.hold([job_id], "alice")
    assert fake.jobs[job_id].state is JobState.QUEUED_HELD
    await fake.release([job_id], "alice")
    assert fake.jobs[job_id].state is JobState.QUEUED


async def test_foreign_account_is_rejected_at_submit_and_preflight(fake: FakeScheduler) -> None:
    with pytest.raises(SubmitRejected) as info:
        await fake.submit(SPEC, "bob")
    assert info.value.kind is RejectKind.INVALID_ACCOUNT
    with pytest.raises(PreflightFailed):
        await fake.preflight(SPEC, "bob")
    assert fake.jobs == {}


async def test_read_file_in_chunks(fake: FakeScheduler) -> None:
    fake.files["/home/alice/out.txt"] = b"hello world"
    first = await fake.read_file("/home/alice/out.txt", 0, 5, "alice")
    rest = await fake.read_file("/home/alice/out.txt", first.next_offset, 100, "alice")
    assert (first.data, first.eof, rest.data, rest.eof) == (b"hello", False, b" world", True)
    with pytest.raises(FileUnavailable):
        await fake.read_file("/home/alice/missing", 0, 5, "alice")
