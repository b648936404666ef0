"""The scheduler contract on the real OpenPBS cluster (``scripts/dev-cluster up --scheduler pbs``).

The same scenarios as ``test_scheduler_contract.py`` in PBS's terms: queues instead of
partitions, ``PBS_ARRAY_INDEX``, array ids ``123[].pbshead``, and what PBS says of its own
(``Exit_status`` -29 for the walltime, -27 for the memory limit, substate 91 once deleted).
Over SSH only: PBS has no REST API the portal uses, and the adapter says so.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
from collections.abc import AsyncIterator, Callable
from datetime import UTC, datetime, timedelta

import pytest

from app.scheduler.base import SchedulerAdapter
from app.scheduler.capabilities import capabilities_of
from app.scheduler.errors import (
    InvalidSpec,
    JobAlreadyEnded,
    JobNotFound,
    PermissionDenied,
    PreflightFailed,
    SchedulerError,
)
from app.scheduler.pbs.adapter import PbsAdapter
from app.scheduler.pbs.commands import qstat_argv
from app.scheduler.registry import build_adapter
from app.scheduler.slurm.ssh import SshTransport
from app.scheduler.slurm.ssh_output import OutputTooLarge
from app.scheduler.states import JobState
from app.scheduler.types import JobInfo, JobSpec
from tests.contract.conftest import run_dir_for
from tests.other_schedulers import run_on, scheduler_cluster

pytestmark = pytest.mark.pbs

ALICE = "alice"


@pytest.fixture(scope="module")
async def pbs() -> AsyncIterator[SchedulerAdapter]:
    adapter = build_adapter(scheduler_cluster("pbs"))
    yield adapter
    await adapter.close()


@pytest.fixture
async def cleanup(pbs: SchedulerAdapter) -> AsyncIterator[list[str]]:
    """Job ids to delete after the test, whatever it left behind."""
    jobs: list[str] = []
    yield jobs
    for job_id in jobs:
        with contextlib.suppress(SchedulerError):
            await pbs.cancel([job_id], ALICE)


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


async def submit(adapter: SchedulerAdapter, cleanup: list[str], job: JobSpec) -> str:
    await adapter.preflight(job, ALICE)
    job_id = await adapter.submit(job, ALICE)
    cleanup.append(job_id)
    return job_id


def number(job_id: str) -> str:
    """``123.pbshead`` or ``123[].pbshead`` -> ``123``."""
    return job_id.split(".", 1)[0].split("[", 1)[0]


async def records_of(adapter: SchedulerAdapter, job_id: str) -> list[JobInfo]:
    """The job, or an array's tasks (without the array's own record), from one listing."""
    found = await adapter.queue()
    tasks = [j for j in found if j.array_job_id == job_id and (j.array_task_id or "").isdigit()]
    return tasks or [j for j in found if j.job_id == job_id]


async def wait_for(
    adapter: SchedulerAdapter,
    job_id: str,
    predicate: Callable[[list[JobInfo]], bool],
    deadline: float = 90.0,
) -> list[JobInfo]:
    end = time.monotonic() + deadline
    records: list[JobInfo] = []
    while time.monotonic() < end:
        records = await records_of(adapter, job_id)
        if records and predicate(records):
            return records
        await asyncio.sleep(0.5)
    states = [(r.job_id, r.native_state, r.state, r.reason) for r in records]
    raise AssertionError(f"job {job_id} did not reach the expected state; last seen {states}")


def ended(records: list[JobInfo]) -> bool:
    return records[0].state.is_terminal


def only(records: list[JobInfo]) -> JobInfo:
    assert len(records) == 1, records
    return records[0]


async def test_job_runs_as_the_user_and_output_and_uuid_read_back(
    pbs: SchedulerAdapter, cleanup: list[str]
) -> None:
    run_dir, tag = run_dir_for("runs-as-user"), str(uuid.uuid4())
    job_id = await submit(pbs, cleanup, spec(run_dir, "id -un; echo done", comment=tag))
    assert job_id.endswith(".pbshead") and job_id.split(".")[0].isdigit()
    queued = only(await wait_for(pbs, job_id, lambda r: True))
    assert queued.comment == tag
    job = only(await wait_for(pbs, job_id, ended))
    assert (job.state, job.exit_code, job.user, job.partition) == (
        JobState.COMPLETED,
        0,
        ALICE,
        "workq",
    )
    path = f"{run_dir}/contract-{number(job_id)}.out"
    assert job.stdout_path == path
    chunk = await pbs.read_file(path, 0, 4096, ALICE)
    assert chunk.data == b"alice\ndone\n"


async def test_held_released_running_and_completed_are_observed(
    pbs: SchedulerAdapter, cleanup: list[str]
) -> None:
    job_id = await submit(pbs, cleanup, spec(run_dir_for("held"), "sleep 4", hold=True))
    held = only(await wait_for(pbs, job_id, lambda r: True))
    assert (held.state, held.native_state) == (JobState.QUEUED_HELD, "H")
    await pbs.release([job_id], ALICE)
    await wait_for(pbs, job_id, lambda r: r[0].state is JobState.RUNNING)
    done = only(await wait_for(pbs, job_id, ended))
    assert done.state is JobState.COMPLETED
    assert done.start_time is not None and done.end_time is not None
    assert done.start_time <= done.end_time
    assert done.elapsed_seconds is not None and done.elapsed_seconds >= 3


async def test_hold_and_release_a_waiting_job(pbs: SchedulerAdapter, cleanup: list[str]) -> None:
    # A start time an hour away keeps the job queued (W) for as long as the test needs.
    later = (datetime.now(UTC) + timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M:%S")
    job_id = await submit(pbs, cleanup, spec(run_dir_for("hold"), "true", begin=later))
    waiting = only(await wait_for(pbs, job_id, lambda r: True))
    assert (waiting.state, waiting.native_state) == (JobState.QUEUED, "W")
    await pbs.hold([job_id], ALICE)
    held = only(await wait_for(pbs, job_id, lambda r: r[0].native_state == "H"))
    assert held.state is JobState.QUEUED_HELD
    await pbs.release([job_id], ALICE)
    await wait_for(pbs, job_id, lambda r: r[0].native_state == "W")


async def test_exit_3_is_failed_with_exit_code_3(pbs: SchedulerAdapter, cleanup: list[str]) -> None:
    job_id = await submit(pbs, cleanup, spec(run_dir_for("exit3"), "echo failing; exit 3"))
    job = only(await wait_for(pbs, job_id, ended))
    assert (job.state, job.exit_code, job.signal) == (JobState.FAILED, 3, None)
    assert job.native["Exit_status"] == 3


async def test_cancel_gives_cancelled(pbs: SchedulerAdapter, cleanup: list[str]) -> None:
    job_id = await submit(pbs, cleanup, spec(run_dir_for("cancel"), "sleep 120"))
    await wait_for(pbs, job_id, lambda r: r[0].state is JobState.RUNNING)
    await pbs.cancel([job_id], ALICE)
    job = only(await wait_for(pbs, job_id, ended))
    assert job.state is JobState.CANCELLED
    assert job.native["substate"] == 91


async def test_cancelling_an_unknown_job_says_so(pbs: SchedulerAdapter) -> None:
    with pytest.raises(JobNotFound):
        await pbs.cancel(["987654.pbshead"], ALICE)


async def test_cancelling_a_finished_job_says_it_has_ended(
    pbs: SchedulerAdapter, cleanup: list[str]
) -> None:
    job_id = await submit(pbs, cleanup, spec(run_dir_for("finished"), "true"))
    await wait_for(pbs, job_id, ended)
    with pytest.raises(JobAlreadyEnded):
        await pbs.cancel([job_id], ALICE)


async def test_other_user_cannot_cancel_the_job(pbs: SchedulerAdapter, cleanup: list[str]) -> None:
    job_id = await submit(pbs, cleanup, spec(run_dir_for("other-user"), "true", hold=True))
    with pytest.raises(PermissionDenied) as info:
        await pbs.cancel([job_id], "bob")
    assert "own jobs" in str(info.value)
    await pbs.cancel([job_id], ALICE)


async def test_memory_above_the_request_is_killed_as_out_of_memory(
    pbs: SchedulerAdapter, cleanup: list[str]
) -> None:
    body = "(head -c 300M /dev/zero; sleep 60) | tail > /dev/null"
    job_id = await submit(pbs, cleanup, spec(run_dir_for("oom"), body, memory_mb=100))
    job = only(await wait_for(pbs, job_id, ended, deadline=60))
    assert job.state is JobState.OUT_OF_MEMORY, job.native.get("comment")
    assert job.native["Exit_status"] == -27


async def test_a_submission_makes_a_missing_log_directory_itself(
    pbs: SchedulerAdapter, cleanup: list[str]
) -> None:
    run_dir = run_dir_for("makes-folder")
    job = spec(run_dir, "echo here", stdout=f"{run_dir}/new/deeper/out-%j.txt")
    job_id = await pbs.submit(job, ALICE)
    cleanup.append(job_id)
    assert only(await wait_for(pbs, job_id, ended)).state is JobState.COMPLETED
    chunk = await pbs.read_file(f"{run_dir}/new/deeper/out-{number(job_id)}.txt", 0, 100, ALICE)
    assert chunk.data == b"here\n"


async def test_a_submission_into_a_folder_the_user_cannot_make_submits_nothing(
    pbs: SchedulerAdapter,
) -> None:
    job = spec("/home/bob/not-for-alice", "true", comment=str(uuid.uuid4()))
    with pytest.raises(PreflightFailed) as info:
        await pbs.submit(job, ALICE)
    assert [field for field, _ in info.value.problems] == ["stdout"]
    assert not [j for j in await pbs.queue() if j.comment == job.comment]


async def test_array_tasks_have_their_own_ids_and_states(
    pbs: SchedulerAdapter, cleanup: list[str]
) -> None:
    run_dir = run_dir_for("array")
    body = 'echo "task $PBS_ARRAY_INDEX"; [ "$PBS_ARRAY_INDEX" != 2 ] || exit 3'
    job = spec(run_dir, body, array="1-3", stdout=f"{run_dir}/%A_%a.out")
    job_id = await submit(pbs, cleanup, job)
    assert job_id.endswith("[].pbshead")

    def all_done(records: list[JobInfo]) -> bool:
        return len(records) == 3 and all(r.state.is_terminal for r in records)

    records = await wait_for(pbs, job_id, all_done, deadline=120)
    by_task = {r.array_task_id: r for r in records}
    assert by_task["2"].job_id == job_id.replace("[]", "[2]")
    assert by_task["1"].state is JobState.COMPLETED
    assert (by_task["2"].state, by_task["2"].exit_code) == (JobState.FAILED, 3)
    assert by_task["3"].state is JobState.COMPLETED
    chunk = await pbs.read_file(f"{run_dir}/{number(job_id)}_3.out", 0, 100, ALICE)
    assert chunk.data == b"task 3\n"


async def test_preflight_names_an_unknown_queue_and_the_queues_there_are(
    pbs: SchedulerAdapter,
) -> None:
    job = spec(run_dir_for("queue"), "true", partition="debug")
    with pytest.raises(PreflightFailed) as info:
        await pbs.preflight(job, ALICE)
    assert info.value.problems == [
        ("partition", "queue debug does not exist (this cluster has: gpu, workq)")
    ]


async def test_preflight_reports_a_walltime_above_the_queue_maximum(pbs: SchedulerAdapter) -> None:
    job = spec(run_dir_for("walltime"), "true", partition="workq", time_limit=120)
    with pytest.raises(PreflightFailed) as info:
        await pbs.preflight(job, ALICE)
    assert ("time_limit", "queue workq allows at most 01:00:00") in info.value.problems


async def test_what_pbs_cannot_do_is_refused_before_submission(pbs: SchedulerAdapter) -> None:
    for changes in ({"qos": "normal"}, {"args": ("a",)}, {"array": "1,3,5"}):
        with pytest.raises(PreflightFailed):
            await pbs.preflight(spec(run_dir_for("refused"), "true", **changes), ALICE)
        with pytest.raises(InvalidSpec):
            await pbs.submit(spec(run_dir_for("refused"), "true", **changes), ALICE)


async def test_queues_nodes_ping_and_capabilities(pbs: SchedulerAdapter) -> None:
    queues = {q.name: q for q in await pbs.partitions()}
    assert set(queues) == {"workq", "gpu"}
    assert queues["workq"].is_default and not queues["gpu"].is_default
    assert queues["workq"].total_cpus >= 1
    report = await pbs.nodes()
    assert [n.name for n in report.nodes] == ["pbshead"]
    node = report.nodes[0]
    assert node.cpus_total >= node.cpus_allocated >= 0 and node.memory_mb_total > 0
    assert {p.name for p in report.partitions} == {"workq", "gpu"}
    assert (await pbs.ping()).is_up
    assert await pbs.associations(ALICE) == []
    capabilities = capabilities_of(pbs)
    assert capabilities.partition_word == "queue"
    assert not (capabilities.rest_api or capabilities.expected_start or capabilities.accounts)


async def test_follow_yields_appended_output(pbs: SchedulerAdapter, cleanup: list[str]) -> None:
    run_dir = run_dir_for("follow")
    job_id = await submit(pbs, cleanup, spec(run_dir, "for i in 1 2 3; do echo line$i; done"))
    await wait_for(pbs, job_id, ended)
    stream = pbs.follow(f"{run_dir}/contract-{number(job_id)}.out", ALICE, interval=0.2)
    received = b""
    async with asyncio.timeout(10):
        async for piece in stream:
            received += piece
            if received.count(b"\n") == 3:
                break
    assert received == b"line1\nline2\nline3\n"


@pytest.mark.slow
async def test_walltime_gives_timeout(pbs: SchedulerAdapter, cleanup: list[str]) -> None:
    job_id = await submit(pbs, cleanup, spec(run_dir_for("timeout"), "sleep 300", time_limit=1))
    job = only(await wait_for(pbs, job_id, ended, deadline=150))
    assert job.state is JobState.TIMEOUT
    assert job.native["Exit_status"] == -29
    assert job.elapsed_seconds is not None and job.elapsed_seconds >= 60


OWN_SCRIPT = """#!/bin/bash
#PBS -N gpu_job
#PBS -q {queue}
#PBS -l select=1:ncpus={cpus}
#PBS -l {walltime}=00:05:00
#PBS -m abe -M alice@example.org
echo "on $PBS_O_QUEUE"
"""


async def test_an_own_script_s_directives_are_refused_before_submission_in_pbs_words(
    pbs: SchedulerAdapter,
) -> None:
    script = OWN_SCRIPT.format(queue="gpux", cpus=64, walltime="wallclock")
    job = JobSpec(script=script, name="gpu_job", stdout=f"{run_dir_for('own')}/out-%j.txt")
    with pytest.raises(PreflightFailed) as info:
        await pbs.preflight(job, ALICE)
    assert info.value.problems == [
        (
            "script",
            "line 5: #PBS -l wallclock=00:05:00: PBS has no resource wallclock (did you mean "
            "walltime?) (PBS says: qsub: Unknown resource Resource_List.wallclock)",
        ),
        (
            "script",
            "line 3: #PBS -q gpux: queue gpux does not exist (this cluster has: gpu, workq) "
            "(PBS says: qsub: Unknown queue)",
        ),
        (
            "script",
            "line 4: #PBS -l select=1:ncpus=64: 64 CPUs in one chunk, but no node has more "
            "than 2 (PBS says: Can Never Run: Insufficient amount of resource: ncpus "
            "(R: 64 A: 2 T: 2))",
        ),
    ]


async def test_an_own_script_asking_for_a_queue_the_cluster_has_runs_as_is(
    pbs: SchedulerAdapter, cleanup: list[str]
) -> None:
    run_dir = run_dir_for("own-runs")
    script = OWN_SCRIPT.format(queue="gpu", cpus=1, walltime="walltime")
    job_id = await submit(
        pbs, cleanup, JobSpec(script=script, name="gpu_job", stdout=f"{run_dir}/out-%j.txt")
    )
    job = only(await wait_for(pbs, job_id, ended))
    assert (job.state, job.partition, job.name) == (JobState.COMPLETED, "gpu", "gpu_job")
    chunk = await pbs.read_file(f"{run_dir}/out-{number(job_id)}.txt", 0, 100, ALICE)
    assert chunk.data == b"on gpu\n"


async def test_a_maintenance_reservation_is_read_with_its_window_and_hosts(
    pbs: SchedulerAdapter,
) -> None:
    # Made by a manager (root may not make reservations); a month ahead, so no job waits on it.
    start = datetime.now(UTC).replace(second=0, microsecond=0) + timedelta(days=40)
    end = start + timedelta(hours=2)
    made = run_on("pbs", ["bash", "-c", MAINTENANCE, "-", _pbs_time(start), _pbs_time(end)])
    assert made.returncode == 0, made.stderr
    resv_id = made.stdout.strip().split()[0]
    try:
        found = {r.name: r for r in await pbs.reservations()}
    finally:
        run_on("pbs", ["pbs_rdel", resv_id])
    window = found[resv_id]
    assert window.is_maintenance and (window.start, window.end) == (start, end)
    assert window.nodes == "pbshead"
    assert resv_id not in {r.name for r in await pbs.reservations()}


def _pbs_time(moment: datetime) -> str:
    return moment.strftime("%Y%m%d%H%M")


MAINTENANCE = """
qmgr -c 'set server managers += bob@*'
runuser -u bob -- env PATH="$PATH" TZ=UTC pbs_rsub -R "$1" -E "$2" --hosts pbshead
status=$?
qmgr -c 'set server managers -= bob@*'
exit $status
"""


async def test_a_history_longer_than_any_command_output_is_read_whole(
    pbs: SchedulerAdapter, cleanup: list[str]
) -> None:
    # ``qstat -x`` lists the server's whole history (two weeks by default, 1.8 KB a job):
    # read as it arrives, the transport's cap on what a command prints (64 MiB, about
    # 37,000 jobs) bounds no listing. Here the cap is 4 KiB, two jobs' worth.
    job_id = await submit(pbs, cleanup, spec(run_dir_for("capped"), "sleep 60", hold=True))
    config = scheduler_cluster("pbs")
    capped = PbsAdapter(config, SshTransport(config, output_cap=4096))
    try:
        with pytest.raises(OutputTooLarge):
            await capped.ssh.run(qstat_argv(history=True))
        listed = {job.job_id: job for job in await capped.queue()}
    finally:
        await capped.close()
    assert listed[job_id].state is JobState.QUEUED_HELD
    assert len(listed) > 2
    whole = {job.job_id: job for job in await pbs.queue()}
    assert whole[job_id] == listed[job_id]
