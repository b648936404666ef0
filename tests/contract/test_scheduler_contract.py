"""One contract for every SchedulerAdapter, proven on the real Slurm cluster."""

from __future__ import annotations

import asyncio
import contextlib
import pwd
import uuid
from collections.abc import AsyncIterator

import pytest

from app.scheduler.base import SchedulerAdapter
from app.scheduler.errors import (
    JobAlreadyEnded,
    JobNotFound,
    PermissionDenied,
    PreflightFailed,
    RejectKind,
    SubmitRejected,
)
from app.scheduler.registry import build_adapter
from app.scheduler.states import JobState
from app.scheduler.types import JobSpec
from tests.contract.conftest import run_dir_for, wait_for_accounting
from tests.slurm_versions import cluster_config, major_minor

pytestmark = pytest.mark.slurm

ALICE = "alice"


def spec(run_dir: str, body: str, **changes: object) -> JobSpec:
    fields: dict[str, object] = {
        "script": f"#!/bin/bash\n{body}\n",
        "name": "contract",
        "account": "physics",
        "time_limit": 5,
        "working_dir": "/home/alice",
        "stdout": f"{run_dir}/%x-%j.out",
    }
    fields.update(changes)
    return JobSpec(**fields)  # type: ignore[arg-type]


def only(records):
    assert len(records) == 1, records
    return records[0]


async def submit(adapter, cleanup, job_spec, user=ALICE):
    await adapter.preflight(job_spec, user)
    job_id = await adapter.submit(job_spec, user)
    cleanup.append((adapter, job_id, user))
    return job_id


async def test_job_runs_as_the_submitting_user_and_output_reads_back(
    adapter: SchedulerAdapter, run_dir, cleanup, wait_for
) -> None:
    tag = str(uuid.uuid4())
    job_id = await submit(adapter, cleanup, spec(run_dir, "id -un; echo done", comment=tag))
    queued = only(await wait_for(adapter, job_id, lambda r: True))
    assert queued.comment == tag or queued.state.is_terminal
    job = only(await wait_for(adapter, job_id, lambda r: r[0].state.is_terminal))
    assert (job.state, job.exit_code, job.user) == (JobState.COMPLETED, 0, ALICE)
    chunk = await adapter.read_file(f"{run_dir}/contract-{job_id}.out", 0, 4096, ALICE)
    assert chunk.data == b"alice\ndone\n"
    assert chunk.eof and chunk.size == len(chunk.data)


async def test_pending_running_and_completed_are_observed(
    adapter: SchedulerAdapter, run_dir, cleanup, wait_for
) -> None:
    job_id = await submit(adapter, cleanup, spec(run_dir, "sleep 6", hold=True))
    held = only(await wait_for(adapter, job_id, lambda r: True))
    assert held.state is JobState.QUEUED_HELD
    await adapter.release([job_id], ALICE)
    await wait_for(adapter, job_id, lambda r: r[0].state is JobState.RUNNING)
    done = only(await wait_for(adapter, job_id, lambda r: r[0].state.is_terminal))
    assert done.state is JobState.COMPLETED
    assert done.start_time is not None and done.end_time is not None
    assert done.start_time <= done.end_time


async def test_exit_3_is_failed_with_exit_code_3(
    adapter: SchedulerAdapter, run_dir, cleanup, wait_for
) -> None:
    job_id = await submit(adapter, cleanup, spec(run_dir, "echo failing; exit 3"))
    job = only(await wait_for(adapter, job_id, lambda r: r[0].state.is_terminal))
    assert (job.state, job.exit_code, job.signal) == (JobState.FAILED, 3, None)
    from_queue = [j for j in await adapter.queue() if j.job_id == job_id]
    assert [(j.state, j.exit_code) for j in from_queue] in ([], [(JobState.FAILED, 3)])


async def test_cancel_gives_cancelled_by_the_user(
    adapter: SchedulerAdapter, run_dir, cleanup, wait_for
) -> None:
    job_id = await submit(adapter, cleanup, spec(run_dir, "sleep 120"))
    await wait_for(adapter, job_id, lambda r: r[0].state is JobState.RUNNING)
    await adapter.cancel([job_id], ALICE)
    job = only(await wait_for(adapter, job_id, lambda r: r[0].state.is_terminal))
    assert job.state is JobState.CANCELLED
    accounted = only(await wait_for_accounting(adapter, job_id, lambda j: j.state.is_terminal))
    assert accounted.native_state == f"CANCELLED by {pwd.getpwnam(ALICE).pw_uid}"


async def test_cancelling_an_unknown_job_says_so(any_adapter: SchedulerAdapter) -> None:
    # Without --verbose, scancel prints nothing and exits 0 for an id it does not know.
    with pytest.raises(JobNotFound):
        await any_adapter.cancel(["987654321"], ALICE)


async def test_cancelling_a_finished_job_says_it_has_ended(
    adapter: SchedulerAdapter, run_dir, cleanup, wait_for
) -> None:
    job_id = await submit(adapter, cleanup, spec(run_dir, "true"))
    await wait_for(adapter, job_id, lambda r: r[0].state.is_terminal)
    with pytest.raises(JobAlreadyEnded):
        await adapter.cancel([job_id], ALICE)


async def test_out_of_memory_kill_is_a_failure_by_signal_9(
    adapter: SchedulerAdapter, run_dir, cleanup, wait_for
) -> None:
    # tail keeps the 300 MB "line" in memory while it waits for more input.
    body = "(head -c 300M /dev/zero; sleep 60) | tail > /dev/null"
    job_id = await submit(adapter, cleanup, spec(run_dir, body, memory_mb=100))
    job = only(await wait_for(adapter, job_id, lambda r: r[0].state.is_terminal))
    accounted = only(await wait_for_accounting(adapter, job_id, lambda j: j.state.is_terminal))
    for record in (job, accounted):
        assert (record.state, record.signal) == (JobState.FAILED, 9), record
    assert accounted.elapsed_seconds is not None and accounted.elapsed_seconds < 50


async def test_held_job_is_held_in_the_queue_and_in_accounting(
    adapter: SchedulerAdapter, run_dir, cleanup, wait_for
) -> None:
    job_id = await submit(adapter, cleanup, spec(run_dir, "true", hold=True))
    queued = only(await wait_for(adapter, job_id, lambda r: True))
    assert queued.state is JobState.QUEUED_HELD
    accounted = only(await wait_for_accounting(adapter, job_id, lambda j: True))
    assert accounted.state is JobState.QUEUED_HELD
    await adapter.release([job_id], ALICE)
    done = only(await wait_for(adapter, job_id, lambda r: r[0].state.is_terminal))
    assert done.state is JobState.COMPLETED


async def test_a_submission_makes_a_missing_log_directory_itself(
    adapter: SchedulerAdapter, run_dir, cleanup, wait_for
) -> None:
    # Without preflight: submit makes the folder in the round trip that runs sbatch.
    job_spec = spec(run_dir, "echo here", stdout=f"{run_dir}/new/deeper/out-%j.txt")
    job_id = await adapter.submit(job_spec, ALICE)
    cleanup.append((adapter, job_id, ALICE))
    job = only(await wait_for(adapter, job_id, lambda r: r[0].state.is_terminal))
    assert job.state is JobState.COMPLETED
    chunk = await adapter.read_file(f"{run_dir}/new/deeper/out-{job_id}.txt", 0, 100, ALICE)
    assert chunk.data == b"here\n"


async def test_a_missing_log_directory_named_after_the_job_id_is_created_by_slurm_since_23_02(
    adapter: SchedulerAdapter, slurm_version: str, run_dir, cleanup, wait_for
) -> None:
    # The job id is not known before sbatch answers, so only Slurm can make this folder.
    job_spec = spec(run_dir, "echo here", stdout=f"{run_dir}/run-%j/out.txt")
    job_id = await adapter.submit(job_spec, ALICE)
    cleanup.append((adapter, job_id, ALICE))
    job = only(await wait_for(adapter, job_id, lambda r: r[0].state.is_terminal))
    if major_minor(slurm_version) < (23, 2):
        assert (job.state, job.signal) == (JobState.FAILED, 53)
        return
    assert job.state is JobState.COMPLETED
    chunk = await adapter.read_file(f"{run_dir}/run-{job_id}/out.txt", 0, 100, ALICE)
    assert chunk.data == b"here\n"


async def test_a_submission_into_a_folder_the_user_cannot_make_submits_nothing(
    adapter: SchedulerAdapter,
) -> None:
    job_spec = spec("/home/bob/not-for-alice", "true", comment=str(uuid.uuid4()))
    with pytest.raises(PreflightFailed) as info:
        await adapter.submit(job_spec, ALICE)
    assert [field for field, _ in info.value.problems] == ["stdout"]
    assert not [j for j in await adapter.queue() if j.comment == job_spec.comment]


async def test_array_tasks_have_their_own_states(
    adapter: SchedulerAdapter, run_dir, cleanup, wait_for
) -> None:
    body = 'echo "task $SLURM_ARRAY_TASK_ID"; [ "$SLURM_ARRAY_TASK_ID" != 2 ] || exit 3'
    job_spec = spec(run_dir, body, array="1-3", stdout=f"{run_dir}/%A_%a.out")
    job_id = await submit(adapter, cleanup, job_spec)

    def all_done(records):
        tasks = [r for r in records if r.array_task_id in {"1", "2", "3"}]
        return len(tasks) == 3 and all(r.state.is_terminal for r in tasks)

    records = await wait_for(adapter, job_id, all_done, deadline=180)
    by_task = {r.array_task_id: r for r in records if r.array_job_id == job_id}
    assert by_task["1"].state is JobState.COMPLETED
    assert (by_task["2"].state, by_task["2"].exit_code) == (JobState.FAILED, 3)
    assert by_task["3"].state is JobState.COMPLETED
    chunk = await adapter.read_file(f"{run_dir}/{job_id}_3.out", 0, 100, ALICE)
    assert chunk.data == b"task 3\n"


async def test_preflight_creates_a_missing_log_directory(
    adapter: SchedulerAdapter, run_dir, cleanup, wait_for
) -> None:
    job_spec = spec(run_dir, "echo made it", stdout=f"{run_dir}/deep/er/out-%j.txt")
    job_id = await submit(adapter, cleanup, job_spec)
    job = only(await wait_for(adapter, job_id, lambda r: r[0].state.is_terminal))
    assert job.state is JobState.COMPLETED
    chunk = await adapter.read_file(f"{run_dir}/deep/er/out-{job_id}.txt", 0, 100, ALICE)
    assert chunk.data == b"made it\n"


async def test_preflight_creates_a_log_directory_named_after_the_job_and_user(
    adapter: SchedulerAdapter, run_dir, cleanup, wait_for
) -> None:
    job_spec = spec(run_dir, "echo named", stdout=f"{run_dir}/%u/%x/out-%j.txt")
    job_id = await submit(adapter, cleanup, job_spec)
    job = only(await wait_for(adapter, job_id, lambda r: r[0].state.is_terminal))
    assert job.state is JobState.COMPLETED
    chunk = await adapter.read_file(f"{run_dir}/alice/contract/out-{job_id}.txt", 0, 100, ALICE)
    assert chunk.data == b"named\n"


async def test_preflight_reports_an_unwritable_log_directory(adapter: SchedulerAdapter) -> None:
    job_spec = spec("/home/bob/not-for-alice", "true")
    with pytest.raises(PreflightFailed) as info:
        await adapter.preflight(job_spec, ALICE)
    assert [field for field, _ in info.value.problems] == ["stdout"]
    assert "/home/bob/not-for-alice" in info.value.problems[0][1]


async def test_preflight_reports_a_time_limit_above_the_partition_maximum(
    adapter: SchedulerAdapter, run_dir
) -> None:
    job_spec = spec(run_dir, "true", partition="debug", time_limit=120)
    with pytest.raises(PreflightFailed) as info:
        await adapter.preflight(job_spec, ALICE)
    assert ("time_limit", "partition debug allows at most 01:00:00") in info.value.problems


async def test_other_user_cannot_cancel_the_job(any_adapter: SchedulerAdapter, cleanup) -> None:
    job_spec = spec(run_dir_for("other-user"), "sleep 1", hold=True)
    job_id = await submit(any_adapter, cleanup, job_spec)
    with pytest.raises(PermissionDenied) as info:
        await any_adapter.cancel([job_id], "bob")
    assert "own jobs" in str(info.value) or "another user" in str(info.value)
    await any_adapter.cancel([job_id], ALICE)


async def test_invalid_account_is_rejected_in_plain_language(
    any_adapter: SchedulerAdapter,
) -> None:
    job_spec = JobSpec(script="#!/bin/bash\ntrue\n", name="x", account="physics")
    with pytest.raises(SubmitRejected) as info:
        await any_adapter.submit(job_spec, "bob")
    assert info.value.kind is RejectKind.INVALID_ACCOUNT
    assert "account" in info.value.message and "error" not in info.value.message


async def test_partitions_associations_and_ping(any_adapter: SchedulerAdapter) -> None:
    names = {p.name: p for p in await any_adapter.partitions()}
    assert names["debug"].is_default
    assert [a.account for a in await any_adapter.associations(ALICE)] == ["physics"]
    assert (await any_adapter.ping()).is_up


async def test_nodes_come_with_their_partitions_access_rules(any_adapter: SchedulerAdapter) -> None:
    report = await any_adapter.nodes()
    debug = next(p for p in report.partitions if p.name == "debug")
    assert debug.is_up and debug.admits(["physics"], [ALICE])
    assert any("debug" in node.partitions for node in report.nodes)
    for node in report.nodes:
        assert node.cpus_total >= node.cpus_allocated >= 0
        assert node.memory_mb_total >= node.memory_mb_allocated >= 0


async def test_follow_yields_appended_output(
    adapter: SchedulerAdapter, run_dir, cleanup, wait_for
) -> None:
    job_spec = spec(run_dir, "for i in 1 2 3; do echo line$i; sleep 1; done")
    job_id = await submit(adapter, cleanup, job_spec)
    await wait_for(adapter, job_id, lambda r: r[0].state.is_terminal)
    stream = adapter.follow(f"{run_dir}/contract-{job_id}.out", ALICE, interval=0.2)
    received = b""
    async with asyncio.timeout(10):
        async for piece in stream:
            received += piece
            if received.count(b"\n") == 3:
                break
    assert received == b"line1\nline2\nline3\n"


async def test_script_arguments_reach_the_script_literally(
    adapter: SchedulerAdapter, run_dir, cleanup, wait_for
) -> None:
    args = ("hello world", "x$(touch /tmp/portal-arg-marker)", "'q'", "", "--time=1")
    body = 'printf "%s|" "$#" "$@"'
    job_id = await submit(adapter, cleanup, spec(run_dir, body, args=args))
    job = only(await wait_for(adapter, job_id, lambda r: r[0].state.is_terminal))
    assert job.state is JobState.COMPLETED
    chunk = await adapter.read_file(f"{run_dir}/contract-{job_id}.out", 0, 4096, ALICE)
    assert chunk.data.decode() == "5|" + "".join(f"{a}|" for a in args)


@pytest.fixture(scope="module")
async def timeout_job(slurm_version: str) -> AsyncIterator[str]:
    """A timeout job on this version's cluster, submitted as the version's tests start.

    Its minute then passes while the other tests of the version run, instead of a wait of
    its own. One job serves every transport of its version: the node has two CPUs and it
    holds one of them for over a minute, because Slurm rounds time limits up to whole
    minutes. Only this version's cluster: the other versions run beside it, each in its own
    pytest-xdist group, and a job here must not hold their CPUs.
    """
    adapter = build_adapter(cluster_config(slurm_version), "ssh")
    job_id: str | None = None
    try:
        job_spec = spec(run_dir_for("timeout"), "sleep 300", time_limit=1, name="timeout")
        # Preflight creates the log folder as alice: Slurm 22.05 fails a job whose folder
        # is missing.
        await adapter.preflight(job_spec, ALICE)
        job_id = await adapter.submit(job_spec, ALICE)
        yield job_id
    finally:
        if job_id is not None:
            with contextlib.suppress(JobNotFound):  # it has normally timed out by now
                await adapter.cancel([job_id], ALICE)
        await adapter.close()


@pytest.fixture(scope="module", autouse=True)
def start_timeout_job_early(request: pytest.FixtureRequest, slurm_version: str) -> None:
    """Submit the timeout job before the other tests so its minute overlaps with them."""
    selected = request.session.items
    if any(item.originalname == "test_time_limit_gives_timeout" for item in selected):
        request.getfixturevalue("timeout_job")


# Last in the module, so every other test of a version runs during its timeout job's minute.
@pytest.mark.slow
async def test_time_limit_gives_timeout(
    adapter: SchedulerAdapter, timeout_job: str, wait_for
) -> None:
    job = only(await wait_for(adapter, timeout_job, lambda r: r[0].state.is_terminal, 240))
    assert job.state is JobState.TIMEOUT
    assert job.elapsed_seconds is not None and job.elapsed_seconds >= 60
