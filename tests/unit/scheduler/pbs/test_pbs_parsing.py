"""qstat, qstat -Q/-B and pbsnodes JSON recorded from the real OpenPBS 23.06 cluster
(scripts/capture-pbs-outputs) read into JobInfo, PartitionInfo and NodeInfo."""

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from app.scheduler.nodes import NodeState
from app.scheduler.pbs.parsing import (
    ended_state,
    node_state,
    parse_jobs,
    parse_queues,
    parse_size,
    parse_status_nodes,
    parse_time,
)
from app.scheduler.pbs.qstat_stream import QstatReader
from app.scheduler.states import JobState

RECORDED = Path(__file__).resolve().parents[3] / "fixtures" / "pbs" / "23.06"
IDS: dict[str, str] = json.loads((RECORDED / "manifest.json").read_text())["jobs"]


@pytest.fixture(scope="module")
def jobs():
    listing = parse_jobs((RECORDED / "qstat-history.json").read_text())
    return {job.job_id: job for job in listing}


@pytest.mark.parametrize(
    ("what", "state", "exit_code", "native"),
    [
        ("completed", JobState.COMPLETED, 0, "F"),
        ("exit_3", JobState.FAILED, 3, "F"),
        ("deleted", JobState.CANCELLED, None, "F"),
        ("walltime", JobState.TIMEOUT, None, "F"),
        ("memory", JobState.OUT_OF_MEMORY, None, "F"),
        # One of its tasks failed: the array ends with status 0 and substate "failed".
        ("array", JobState.FAILED, 0, "F"),
        ("held", JobState.QUEUED_HELD, None, "H"),
        ("waiting", JobState.QUEUED, None, "W"),
    ],
)
def test_each_ending_and_waiting_state_recorded_is_mapped(jobs, what, state, exit_code, native):
    job = jobs[IDS[what]]
    assert (job.state, job.exit_code, job.native_state) == (state, exit_code, native)
    assert job.comment == f"capture-{what.replace('_', '')}"
    assert job.user == "alice" and job.partition == "workq"


def test_pbs_own_words_say_why_a_job_ended(jobs) -> None:
    assert jobs[IDS["walltime"]].native["Exit_status"] == -29
    assert jobs[IDS["walltime"]].reason.endswith("and exceeded resource walltime")
    assert jobs[IDS["memory"]].native["Exit_status"] == -27
    assert jobs[IDS["deleted"]].reason.endswith("and terminated by alice@pbshead")


def test_a_finished_job_has_its_times_limit_usage_and_log_paths(jobs) -> None:
    job = jobs[IDS["walltime"]]
    assert job.submit_time is not None and job.submit_time.tzinfo is UTC
    assert job.start_time is not None and job.end_time is not None
    assert job.submit_time <= job.start_time < job.end_time
    assert job.time_limit == timedelta(minutes=1)
    assert job.elapsed_seconds is not None and job.elapsed_seconds >= 60
    assert (job.alloc.cpus, job.alloc.nodes) == (1, 1)
    assert job.nodes == "pbshead"
    number = IDS["walltime"].split(".")[0]
    out = f"/home/alice/portal-capture/walltime-{number}.out"
    # -j oe: errors go into the output file, whatever Error_Path says.
    assert (job.stdout_path, job.stderr_path, job.work_dir) == (out, out, "/home/alice")
    assert jobs[IDS["memory"]].alloc.memory_bytes == 100 * 1024 * 1024


def test_array_tasks_are_records_of_their_own_with_pbs_ids(jobs) -> None:
    array = IDS["array"]
    assert array.endswith("[].pbshead")
    tasks = {
        j.array_task_id: j for j in jobs.values() if j.array_job_id == array and j.job_id != array
    }
    assert sorted(tasks) == ["1", "2", "3"]
    assert tasks["2"].job_id == array.replace("[]", "[2]")
    assert [tasks[t].state for t in ("1", "2", "3")] == [
        JobState.COMPLETED,
        JobState.FAILED,
        JobState.COMPLETED,
    ]
    assert tasks["2"].exit_code == 3
    # The array's own record: every task has started, so none is left to name.
    assert (jobs[array].array_job_id, jobs[array].array_task_id) == (array, None)


@pytest.mark.parametrize(
    ("record", "expected"),
    [
        ({"Exit_status": 271, "substate": 93}, (JobState.FAILED, None, 15)),
        ({"Exit_status": -1, "substate": 93}, (JobState.FAILED, None, None)),
        ({"Exit_status": -26}, (JobState.OUT_OF_MEMORY, None, None)),
        ({"substate": 91}, (JobState.CANCELLED, None, None)),
    ],
)
def test_signals_and_pbs_own_failures(record, expected) -> None:
    assert ended_state(record) == expected


def test_queues_are_partitions_with_the_default_and_walltime_limits() -> None:
    queues = {q.name: q for q in parse_queues((RECORDED / "status.txt").read_text())}
    assert set(queues) == {"workq", "gpu"}
    assert queues["workq"].is_default and not queues["gpu"].is_default
    assert queues["workq"].max_time == timedelta(hours=1)
    assert queues["workq"].default_time == timedelta(minutes=10)
    assert queues["gpu"].max_time == timedelta(hours=24)
    assert (queues["workq"].total_nodes, queues["workq"].total_cpus) == (1, 2)


def test_nodes_come_with_every_queue_that_may_use_them() -> None:
    report = parse_status_nodes((RECORDED / "status.txt").read_text())
    [node] = report.nodes
    assert (node.name, node.state, node.cpus_total) == ("pbshead", NodeState.IDLE, 2)
    assert node.memory_mb_total > 1000 and node.partitions == ("workq", "gpu")
    assert all(p.is_up and p.admits(["x"], ["alice"]) for p in report.partitions)


@pytest.mark.parametrize(
    ("native", "allocated", "state"),
    [
        ("free", 0, NodeState.IDLE),
        ("free", 1, NodeState.MIXED),
        ("job-busy", 2, NodeState.ALLOCATED),
        ("offline", 0, NodeState.DRAINED),
        ("down,offline", 0, NodeState.DOWN),
        ("stale", 0, NodeState.DOWN),
    ],
)
def test_node_states(native: str, allocated: int, state: NodeState) -> None:
    assert node_state(native, allocated) is state


def test_sizes() -> None:
    assert parse_size("102400kb") == 100 * 1024 * 1024
    assert parse_size("2gb") == 2 * 1024**3
    assert parse_size("0kb") == 0 and parse_size(None) is None


def test_an_empty_answer_is_no_job() -> None:
    assert parse_jobs("") == [] and parse_jobs('{"timestamp": 1}') == []


def test_times_are_read_as_utc() -> None:
    assert parse_time("Fri Nov 27 20:28:09 2026") == datetime(2026, 11, 27, 20, 28, 9, tzinfo=UTC)


@pytest.mark.parametrize(
    "value",
    [
        "",
        None,
        "Fri Nov 27 20:28:09",
        "Fri Foo 27 20:28:09 2026",
        "Fri Feb 30 20:28:09 2026",
        "Fri Nov 27 20:28 2026",
        "Fri Nov 27 25:28:09 2026",
    ],
)
def test_times_pbs_would_not_print_are_no_time(value) -> None:
    assert parse_time(value) is None


def test_the_queue_reader_reuses_the_records_of_unchanged_jobs() -> None:
    text = (RECORDED / "qstat-history.json").read_text()
    reader = QstatReader()
    first = reader.parse(text)
    assert first == parse_jobs(text)
    again = reader.parse(text)
    assert again == first and all(a is b for a, b in zip(again, first, strict=True))
    # One job changes (it starts): its record is read again, the others are kept.
    listing = json.loads(text)
    changed_id = IDS["held"]
    listing["Jobs"][changed_id]["job_state"] = "R"
    later = reader.parse(json.dumps(listing))
    assert later == parse_jobs(json.dumps(listing))
    changed = next(job for job in later if job.job_id == changed_id)
    assert changed.native_state == "R" and all(job is not changed for job in first)
    assert sum(job is old for job, old in zip(later, first, strict=True)) == len(first) - 1
