"""The scheduler contract on the real LSF cluster (OpenLava 2.2: dev-cluster --scheduler lsf).

The same promises as test_scheduler_contract.py makes on Slurm, in LSF's terms: queues, not
partitions; no accounts; TERM_* reasons for the jobs LSF ends itself.
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import AsyncIterator
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from app.scheduler.base import SchedulerAdapter
from app.scheduler.errors import (
    InvalidSpec,
    JobAlreadyEnded,
    JobNotFound,
    PermissionDenied,
    PreflightFailed,
    RejectKind,
    SubmitRejected,
)
from app.scheduler.lsf.adapter import LsfAdapter
from app.scheduler.lsf.commands import bjobs_argv
from app.scheduler.registry import build_adapter
from app.scheduler.slurm.ssh import SshTransport
from app.scheduler.slurm.ssh_output import OutputTooLarge
from app.scheduler.states import JobState
from app.scheduler.types import JobSpec
from tests.contract.conftest import run_dir_for, wait_for_accounting
from tests.lsf_cluster import lsf_config

pytestmark = pytest.mark.lsf

ALICE = "alice"


@pytest.fixture(scope="module")
async def adapter() -> AsyncIterator[SchedulerAdapter]:
    built = build_adapter(lsf_config())
    yield built
    await built.close()


def spec(run_dir: str, body: str, **changes: object) -> JobSpec:
    fields: dict[str, object] = {
        "script": f"#!/bin/bash\n{body}\n",
        "name": "contract",
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


def ended(records):
    return records[0].state.is_terminal


async def test_the_clusters_file_chooses_the_lsf_adapter(adapter: SchedulerAdapter) -> None:
    assert isinstance(adapter, LsfAdapter)
    assert lsf_config().scheduler == "lsf"
    assert not adapter.capabilities.expected_start and not adapter.capabilities.rest_api
    assert adapter.capabilities.partition_word == "queue"


async def test_job_runs_as_the_submitting_user_and_output_reads_back(
    adapter: SchedulerAdapter, run_dir, cleanup, wait_for
) -> None:
    tag = str(uuid.uuid4())
    job_id = await submit(adapter, cleanup, spec(run_dir, "id -un; echo done", comment=tag))
    queued = only(await wait_for(adapter, job_id, lambda r: True))
    assert (queued.comment, queued.name, queued.partition) == (tag, "contract", "normal")
    job = only(await wait_for(adapter, job_id, ended))
    assert (job.state, job.exit_code, job.user) == (JobState.COMPLETED, 0, ALICE)
    assert job.stdout_path == f"{run_dir}/contract-{job_id}.out"
    chunk = await adapter.read_file(job.stdout_path, 0, 4096, ALICE)
    assert chunk.data == b"alice\ndone\n"
    assert chunk.eof and chunk.size == len(chunk.data)


async def test_held_then_released_job_is_observed_pending_running_and_done(
    adapter: SchedulerAdapter, run_dir, cleanup, wait_for
) -> None:
    job_id = await submit(adapter, cleanup, spec(run_dir, "sleep 6", hold=True))
    held = only(await wait_for(adapter, job_id, lambda r: True))
    assert (held.state, held.native_state) == (JobState.QUEUED_HELD, "PSUSP")
    accounted = only(await wait_for_accounting(adapter, job_id, lambda j: True))
    assert accounted.state is JobState.QUEUED_HELD
    await adapter.release([job_id], ALICE)
    await wait_for(adapter, job_id, lambda r: r[0].state is JobState.RUNNING)
    done = only(await wait_for(adapter, job_id, ended))
    assert done.state is JobState.COMPLETED
    assert done.start_time is not None and done.end_time is not None
    assert done.start_time <= done.end_time


async def test_a_pending_job_can_be_held_and_released(
    adapter: SchedulerAdapter, run_dir, cleanup, wait_for
) -> None:
    tomorrow = (datetime.now() + timedelta(days=1)).strftime("%Y-%m-%dT%H:%M")
    job_id = await submit(adapter, cleanup, spec(run_dir, "true", begin=tomorrow))
    await adapter.hold([job_id], ALICE)
    held = only(await wait_for(adapter, job_id, lambda r: r[0].state is JobState.QUEUED_HELD))
    assert held.native_state == "PSUSP"
    await adapter.release([job_id], ALICE)
    await wait_for(adapter, job_id, lambda r: r[0].state is JobState.QUEUED)


async def test_exit_3_is_failed_with_exit_code_3(
    adapter: SchedulerAdapter, run_dir, cleanup, wait_for
) -> None:
    job_id = await submit(adapter, cleanup, spec(run_dir, "echo failing; exit 3"))
    job = only(await wait_for(adapter, job_id, ended))
    assert (job.state, job.exit_code, job.native_state) == (JobState.FAILED, 3, "EXIT")
    accounted = only(await wait_for_accounting(adapter, job_id, lambda j: j.state.is_terminal))
    assert (accounted.state, accounted.exit_code) == (JobState.FAILED, 3)


async def test_cancel_gives_cancelled_by_the_owner_in_the_history(
    adapter: SchedulerAdapter, run_dir, cleanup, wait_for
) -> None:
    job_id = await submit(adapter, cleanup, spec(run_dir, "sleep 120"))
    await wait_for(adapter, job_id, lambda r: r[0].state is JobState.RUNNING)
    await adapter.cancel([job_id], ALICE)
    await wait_for(adapter, job_id, ended)
    accounted = only(await wait_for_accounting(adapter, job_id, lambda j: j.state.is_terminal))
    assert (accounted.state, accounted.reason) == (JobState.CANCELLED, "TERM_OWNER")
    assert accounted.native["killed"] == {"signal": "KILL", "by": ALICE}


async def test_cancelling_an_unknown_job_says_so(adapter: SchedulerAdapter) -> None:
    with pytest.raises(JobNotFound) as info:
        await adapter.cancel(["987654321"], ALICE)
    assert "No matching job found" in str(info.value)


async def test_cancelling_a_finished_job_says_it_has_ended(
    adapter: SchedulerAdapter, run_dir, cleanup, wait_for
) -> None:
    job_id = await submit(adapter, cleanup, spec(run_dir, "true"))
    await wait_for(adapter, job_id, ended)
    with pytest.raises(JobAlreadyEnded):
        await adapter.cancel([job_id], ALICE)


async def test_other_user_cannot_cancel_the_job(adapter: SchedulerAdapter, cleanup) -> None:
    job_id = await submit(adapter, cleanup, spec(run_dir_for("other-user"), "true", hold=True))
    with pytest.raises(PermissionDenied) as info:
        await adapter.cancel([job_id], "bob")
    assert "own jobs" in str(info.value) and "User permission denied" in str(info.value)
    await adapter.cancel([job_id], ALICE)


async def test_memory_limit_kill_is_out_of_memory(
    adapter: SchedulerAdapter, run_dir, cleanup, wait_for
) -> None:
    body = "(head -c 300M /dev/zero; sleep 60) | tail > /dev/null"
    job_id = await submit(adapter, cleanup, spec(run_dir, body, memory_mb=100))
    job = only(await wait_for(adapter, job_id, ended))
    accounted = only(await wait_for_accounting(adapter, job_id, lambda j: j.state.is_terminal))
    for record in (job, accounted):
        assert (record.state, record.reason) == (JobState.OUT_OF_MEMORY, "TERM_MEMLIMIT"), record
    assert job.elapsed_seconds is not None and job.elapsed_seconds < 50


async def test_array_tasks_have_their_own_states_and_ids(
    adapter: SchedulerAdapter, run_dir, cleanup, wait_for
) -> None:
    body = 'echo "task $LSB_JOBINDEX"; [ "$LSB_JOBINDEX" != 2 ] || exit 3'
    job_spec = spec(run_dir, body, array="1-3", stdout=f"{run_dir}/%A_%a.out")
    job_id = await submit(adapter, cleanup, job_spec)

    def all_done(records):
        tasks = [r for r in records if r.array_task_id in {"1", "2", "3"}]
        return len(tasks) == 3 and all(r.state.is_terminal for r in tasks)

    records = await wait_for(adapter, job_id, all_done, deadline=120)
    by_task = {r.array_task_id: r for r in records if r.array_job_id == job_id}
    assert by_task["2"].job_id == f"{job_id}[2]"
    assert by_task["1"].state is JobState.COMPLETED
    assert (by_task["2"].state, by_task["2"].exit_code) == (JobState.FAILED, 3)
    assert by_task["3"].state is JobState.COMPLETED
    chunk = await adapter.read_file(f"{run_dir}/{job_id}_3.out", 0, 100, ALICE)
    assert chunk.data == b"task 3\n"


async def test_a_submission_makes_a_missing_log_directory_itself(
    adapter: SchedulerAdapter, run_dir, cleanup, wait_for
) -> None:
    job_spec = spec(run_dir, "echo here", stdout=f"{run_dir}/new/deeper/out-%j.txt")
    job_id = await adapter.submit(job_spec, ALICE)
    cleanup.append((adapter, job_id, ALICE))
    job = only(await wait_for(adapter, job_id, ended))
    assert job.state is JobState.COMPLETED
    chunk = await adapter.read_file(f"{run_dir}/new/deeper/out-{job_id}.txt", 0, 100, ALICE)
    assert chunk.data == b"here\n"


async def test_the_job_runs_in_its_working_directory(
    adapter: SchedulerAdapter, run_dir, cleanup, wait_for
) -> None:
    job_spec = spec(run_dir, "pwd", working_dir=f"{run_dir}/work", stdout=f"{run_dir}/work/o-%j")
    job_id = await submit(adapter, cleanup, job_spec)
    job = only(await wait_for(adapter, job_id, ended))
    assert (job.work_dir, job.stdout_path) == (f"{run_dir}/work", f"{run_dir}/work/o-{job_id}")
    chunk = await adapter.read_file(job.stdout_path, 0, 200, ALICE)
    assert chunk.data == f"{run_dir}/work\n".encode()


async def test_a_submission_into_a_folder_the_user_cannot_make_submits_nothing(
    adapter: SchedulerAdapter,
) -> None:
    job_spec = spec("/home/bob/not-for-alice", "true", comment=str(uuid.uuid4()))
    with pytest.raises(PreflightFailed) as info:
        await adapter.submit(job_spec, ALICE)
    assert [field for field, _ in info.value.problems] == ["stdout"]
    assert not [j for j in await adapter.queue() if j.comment == job_spec.comment]


async def test_preflight_names_the_queues_and_their_limits(
    adapter: SchedulerAdapter, run_dir
) -> None:
    with pytest.raises(PreflightFailed) as info:
        await adapter.preflight(spec(run_dir, "true", partition="gpu"), ALICE)
    assert info.value.problems == [
        ("partition", "queue gpu does not exist (this cluster has: normal, short)")
    ]
    with pytest.raises(PreflightFailed) as info:
        await adapter.preflight(spec(run_dir, "true", partition="short", time_limit=120), ALICE)
    assert info.value.problems == [("time_limit", "queue short allows at most 60 minutes")]
    with pytest.raises(PreflightFailed) as info:
        await adapter.preflight(spec(run_dir, "true", ntasks=64), ALICE)
    assert info.value.problems == [("ntasks", "queue normal allows at most 2 cores")]


async def test_bsub_refusals_keep_lsfs_own_words(adapter: SchedulerAdapter, run_dir) -> None:
    refusals = {
        "gpu": (RejectKind.INVALID_PARTITION, "gpu: No such queue. Job not submitted."),
        "short": (
            RejectKind.TIME_LIMIT,
            "RUNLIMIT: Cannot exceed queue's hard limit(s). Job not submitted.",
        ),
    }
    for queue, (kind, words) in refusals.items():
        with pytest.raises(SubmitRejected) as info:
            await adapter.submit(spec(run_dir, "true", partition=queue, time_limit=120), ALICE)
        assert (info.value.kind, info.value.raw) == (kind, words)
    with pytest.raises(SubmitRejected) as info:
        await adapter.submit(spec(run_dir, "true", ntasks=64), ALICE)
    assert info.value.raw == "Too many processors requested. Job not submitted."


async def test_script_arguments_are_refused_before_anything_is_sent(
    adapter: SchedulerAdapter, run_dir
) -> None:
    with pytest.raises(InvalidSpec) as info:
        await adapter.submit(spec(run_dir, "true", args=("a",)), ALICE)
    assert info.value.field == "args"


async def test_queues_nodes_and_ping(adapter: SchedulerAdapter) -> None:
    queues = {q.name: q for q in await adapter.partitions()}
    assert sorted(queues) == ["normal", "short"] and queues["normal"].is_default
    assert queues["short"].max_time is not None and queues["short"].max_time.total_seconds() == 3600
    report = await adapter.nodes()
    assert [n.name for n in report.nodes] == ["lsfhead"]
    assert report.nodes[0].cpus_total >= report.nodes[0].cpus_allocated >= 0
    assert await adapter.associations(ALICE) == []
    assert await adapter.reservations() == []
    assert (await adapter.ping()).is_up


async def test_follow_yields_appended_output(
    adapter: SchedulerAdapter, run_dir, cleanup, wait_for
) -> None:
    job_spec = spec(run_dir, "for i in 1 2 3; do echo line$i; sleep 1; done")
    job_id = await submit(adapter, cleanup, job_spec)
    await wait_for(adapter, job_id, ended)
    stream = adapter.follow(f"{run_dir}/contract-{job_id}.out", ALICE, interval=0.2)
    received = b""
    async with asyncio.timeout(10):
        async for piece in stream:
            received += piece
            if received.count(b"\n") == 3:
                break
    assert received == b"line1\nline2\nline3\n"


@pytest.fixture(scope="module")
async def timeout_job() -> AsyncIterator[str]:
    """A one-minute job submitted as the module starts, so its minute passes during the
    other tests."""
    built = build_adapter(lsf_config())
    job_id: str | None = None
    try:
        job_spec = spec(run_dir_for("timeout"), "sleep 300", time_limit=1, name="timeout")
        await built.preflight(job_spec, ALICE)
        job_id = await built.submit(job_spec, ALICE)
        yield job_id
    finally:
        if job_id is not None:
            with contextlib.suppress(JobNotFound):
                await built.cancel([job_id], ALICE)
        await built.close()


@pytest.fixture(scope="module", autouse=True)
def start_timeout_job_early(request: pytest.FixtureRequest) -> None:
    if any(item.originalname == "test_run_limit_gives_timeout" for item in request.session.items):
        request.getfixturevalue("timeout_job")


@pytest.mark.slow
async def test_run_limit_gives_timeout(
    adapter: SchedulerAdapter, timeout_job: str, wait_for
) -> None:
    job = only(await wait_for(adapter, timeout_job, ended, 180))
    assert (job.state, job.reason) == (JobState.TIMEOUT, "TERM_RUNLIMIT")
    assert job.elapsed_seconds is not None and job.elapsed_seconds >= 60


SEED_GPU_SCRIPT = (
    Path(__file__).resolve().parents[1] / "fixtures" / "lsf" / "gpu-jobscript.sh"
).read_text()


async def test_the_seed_gpu_script_gets_a_plain_answer_before_and_from_bsub(
    adapter: SchedulerAdapter,
) -> None:
    assert isinstance(adapter, LsfAdapter)
    problems = await adapter.script_problems(SEED_GPU_SCRIPT)
    assert [(p.line, p.text, p.message) for p in problems] == [
        (
            4,
            "#BSUB -q gpu",
            "this cluster has no queue gpu (it has: normal, short) "
            "(bsub: gpu: No such queue. Job not submitted.)",
        )
    ]
    # Sent as it is all the same, bsub says the very words quoted above.
    with pytest.raises(SubmitRejected) as info:
        await adapter.submit(JobSpec(script=SEED_GPU_SCRIPT, working_dir="/home/alice"), ALICE)
    assert (info.value.kind, info.value.raw) == (
        RejectKind.INVALID_PARTITION,
        "gpu: No such queue. Job not submitted.",
    )


async def test_a_scripts_own_directives_choose_its_queue_and_output_file(
    adapter: SchedulerAdapter, run_dir, cleanup, wait_for
) -> None:
    script = (
        f"#!/bin/bash\n#BSUB -J own\n#BSUB -q short\n#BSUB -W 10\n#BSUB -o {run_dir}/own_%J.out\n"
        "echo from my script\n"
    )
    assert isinstance(adapter, LsfAdapter)
    assert await adapter.script_problems(script) == []
    job_spec = JobSpec(script=script, working_dir=run_dir, comment=str(uuid.uuid4()))
    job_id = await submit(adapter, cleanup, job_spec)
    job = only(await wait_for(adapter, job_id, ended))
    assert (job.state, job.name, job.partition, job.comment) == (
        JobState.COMPLETED,
        "own",
        "short",
        job_spec.comment,
    )
    assert job.time_limit == timedelta(minutes=10)
    chunk = await adapter.read_file(f"{run_dir}/own_{job_id}.out", 0, 100, ALICE)
    assert chunk.data == b"from my script\n"


async def test_a_templates_resources_become_the_queues_limits_on_the_job(
    adapter: SchedulerAdapter, run_dir, cleanup, wait_for
) -> None:
    # What a template asks for (cores, time, memory, queue) as bsub's -n, -W, -M and -q.
    job_spec = spec(
        run_dir,
        # LSB_HOSTS names the host once per core the job was given.
        'set -- $LSB_HOSTS; echo "$# cores in $LSB_QUEUE"',
        partition="short",
        ntasks=2,
        time_limit=30,
        memory_mb=512,
    )
    job_id = await submit(adapter, cleanup, job_spec)
    job = only(await wait_for(adapter, job_id, ended))
    assert (job.state, job.partition, job.alloc.cpus) == (JobState.COMPLETED, "short", 2)
    assert job.time_limit == timedelta(minutes=30)
    assert job.native["limits"]["MEMLIMIT"] == f"{512 * 1024} K"
    chunk = await adapter.read_file(f"{run_dir}/contract-{job_id}.out", 0, 100, ALICE)
    assert chunk.data == b"2 cores in short\n"


async def test_a_queue_longer_than_any_command_output_is_read_whole(
    adapter: SchedulerAdapter, run_dir, cleanup, wait_for
) -> None:
    # bjobs -l writes about 830 bytes a job: the queue is gathered past the transport's
    # cap on a command's output (64 MiB, 80,000 jobs). Here the cap is 2 KiB, two jobs'
    # worth, and three jobs are held at least.
    jobs = [await submit(adapter, cleanup, spec(run_dir, "sleep 60", hold=True)) for _ in range(3)]
    for job in jobs:
        await wait_for(adapter, job, lambda r: True)
    config = lsf_config()
    capped = LsfAdapter(config, SshTransport(config, output_cap=2048))
    try:
        with pytest.raises(OutputTooLarge):
            await capped.ssh.run(bjobs_argv())
        listed = {job.job_id: job for job in await capped.queue()}
    finally:
        await capped.close()
    assert all(listed[job].state is JobState.QUEUED_HELD for job in jobs)
    whole = {job.job_id: job for job in await adapter.queue()}
    assert {job: whole[job] for job in jobs} == {job: listed[job] for job in jobs}
