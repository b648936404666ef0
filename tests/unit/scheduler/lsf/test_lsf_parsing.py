"""LSF parsers against outputs recorded from the real OpenLava 2.2 cluster (tests/fixtures/lsf)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from app.scheduler.errors import (
    JobAlreadyEnded,
    JobNotFound,
    PermissionDenied,
    RejectKind,
)
from app.scheduler.lsf import long_form, parsing
from app.scheduler.lsf.bjobs import BjobsReader
from app.scheduler.lsf.errors import classify_bsub_error, classify_control_error, is_transient
from app.scheduler.lsf.nodes import parse_nodes_report
from app.scheduler.lsf.states import state_from_lsf
from app.scheduler.nodes import NodeState
from app.scheduler.states import JobState
from tests.unit.scheduler.lsf.listing import with_wide_listing

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures" / "lsf"
NOW = datetime(2026, 11, 27, 20, 19, tzinfo=UTC)


def recorded(name: str) -> str:
    return (FIXTURES / name).read_text()


@pytest.fixture(scope="module")
def bjobs():
    return {job.job_id: job for job in parsing.parse_jobs(recorded("bjobs-l-a-u-all.txt"), NOW)}


@pytest.fixture(scope="module")
def bhist():
    return {job.job_id: job for job in parsing.parse_jobs(recorded("bhist-l-a-u-all.txt"), NOW)}


@pytest.mark.parametrize(
    ("native", "state"),
    [
        ("PEND", JobState.QUEUED),
        ("PSUSP", JobState.QUEUED_HELD),
        ("RUN", JobState.RUNNING),
        ("USUSP", JobState.SUSPENDED),
        ("SSUSP", JobState.SUSPENDED),
        ("DONE", JobState.COMPLETED),
        ("EXIT", JobState.FAILED),
        ("ZOMBI", JobState.COMPLETING),
        ("UNKWN", JobState.UNDETERMINED),
        ("NEWSTATE", JobState.UNDETERMINED),
    ],
)
def test_every_lsf_state_maps_and_unknown_ones_are_undetermined(native, state) -> None:
    assert state_from_lsf(native) is state


def test_wrapped_lines_are_joined_even_inside_a_path() -> None:
    text = "Job <1>, Job Name <x>, User <alice>, Status <DONE>, Queue <normal>, Command <t\n"
    text += " " * 21 + "rue>\n"
    assert long_form.unwrap(text).splitlines()[0].endswith("Command <true>")


def test_a_header_whose_blank_fell_on_a_wrap_point_still_reads(bjobs) -> None:
    # "Status <DONE>, Queue\n<normal>": LSF drops the blank at the wrap.
    job = bjobs["102"]
    assert (job.state, job.native_state, job.partition) == (JobState.COMPLETED, "DONE", "normal")
    assert (
        job.native["Command"]
        == "#!/bin/bash;#BSUB -J ok;#BSUB -o /home/alice/lsfrec/%J.out;echo hello; id -un"
    )


def test_a_completed_job_has_times_exit_code_and_its_output_file(bjobs) -> None:
    job = bjobs["103"]
    assert (job.state, job.exit_code, job.user, job.name) == (JobState.FAILED, 3, "alice", "fail3")
    assert job.start_time == datetime(2026, 11, 27, 20, 14, 3, tzinfo=UTC)
    assert job.end_time == job.start_time and job.elapsed_seconds == 0
    # %J filled in; $HOME read as the execution home.
    assert (job.stdout_path, job.work_dir) == ("/home/alice/lsfrec/103.out", "/home/alice")
    assert (job.alloc.cpus, job.nodes, job.total_cpu_seconds) == (1, "lsfhead", 0.0)


def test_running_held_and_pending_jobs(bjobs) -> None:
    running, held = bjobs["318"], bjobs["321"]
    assert (running.state, running.end_time, running.exit_code) == (JobState.RUNNING, None, None)
    assert running.elapsed_seconds == 53
    assert (held.state, held.reason) == (
        JobState.QUEUED_HELD,
        "The job was suspended by the user while pending: 1 host",
    )


def test_pending_reasons_are_kept(bhist) -> None:
    busy = {j.job_id: j for j in parsing.parse_jobs(recorded("bjobs-l-a-u-all-busy.txt"), NOW)}
    waiting = [j for j in busy.values() if j.state is JobState.QUEUED]
    assert waiting and all(j.reason == "Job slot limit reached: 1 host" for j in waiting)


def test_array_tasks_have_lsf_ids_and_their_own_output_files(bjobs) -> None:
    tasks = {k: v for k, v in bjobs.items() if v.array_job_id == "105"}
    assert sorted(tasks) == ["105[1]", "105[2]", "105[3]"]
    second = tasks["105[2]"]
    assert (second.array_task_id, second.name, second.state, second.exit_code) == (
        "2",
        "arr",
        JobState.FAILED,
        3,
    )
    assert second.stdout_path == "/home/alice/lsfrec/105_2.out"
    # A throttled array's name: arr2[1-4]%2.
    assert {bjobs[f"322[{i}]"].name for i in range(1, 5)} == {"arr2"}


def test_the_portal_uuid_rides_in_the_job_name(bjobs) -> None:
    job = bjobs["320"]
    assert (job.name, job.comment) == ("waits", "3f2a9c1e-0b7d-4c55-9d1e-2a6f0e4b8c11")
    assert (job.partition, job.time_limit, job.alloc.cpus) == ("short", timedelta(minutes=5), 2)
    assert bjobs["103"].comment is None


def test_run_limit_exits_are_timeouts_with_term_runlimit(bjobs, bhist) -> None:
    for job in (bjobs["316"], bhist["316"]):
        assert (job.state, job.reason, job.exit_code) == (JobState.TIMEOUT, "TERM_RUNLIMIT", 140)
        assert job.time_limit == timedelta(minutes=1)


def test_memory_limit_kills_are_out_of_memory_with_term_memlimit(bjobs, bhist) -> None:
    for job in (bjobs["317"], bhist["317"]):
        assert (job.state, job.reason, job.exit_code) == (
            JobState.OUT_OF_MEMORY,
            "TERM_MEMLIMIT",
            130,
        )
        assert job.native["limits"] == {"MEMLIMIT": "100000 K"}


def test_a_kill_is_failed_in_bjobs_and_cancelled_in_the_history(bjobs, bhist) -> None:
    # bjobs says only "Exited with exit code 130"; bhist says who asked for the kill.
    assert (bjobs["319"].state, bjobs["319"].exit_code) == (JobState.FAILED, 130)
    cancelled = bhist["319"]
    assert (cancelled.state, cancelled.reason, cancelled.user) == (
        JobState.CANCELLED,
        "TERM_OWNER",
        "bob",
    )
    assert cancelled.native["killed"] == {"signal": "KILL", "by": "bob"}
    assert cancelled.account == "chemistry"


def test_a_kill_as_the_job_starts_is_cancelled_however_openlava_books_its_end() -> None:
    # Jobs bkill'ed in the second they started: OpenLava booked one "Done successfully" with
    # exit 0 (615), one "Exited by signal 2" (636), one exit code 143 ten seconds on (596).
    now = datetime(2026, 11, 27, 21, 0, tzinfo=UTC)
    jobs = {j.job_id: j for j in parsing.parse_jobs(recorded("bhist-l-kills-at-start.txt"), now)}
    for job_id in ("615", "636", "596"):
        job = jobs[job_id]
        assert (job.state, job.reason) == (JobState.CANCELLED, "TERM_OWNER"), job_id
        assert job.native["killed"] == {"signal": "KILL", "by": "alice"}
    assert (jobs["615"].native_state, jobs["615"].exit_code) == ("DONE", 0)
    # A job sent USR1 (which it ignored) that then ran to its end is still completed.
    assert (jobs["642"].state, jobs["642"].reason) == (JobState.COMPLETED, None)


def test_a_kill_logged_after_the_end_leaves_a_done_job_completed() -> None:
    # Job 615's record with its kill request moved after "Done successfully".
    record = recorded("bhist-l-kills-at-start.txt").split("-" * 78)[1]
    kill = "Fri Nov 27 20:53:23: Signal <KILL> requested by user or administrator <alice>;\n"
    done = "Fri Nov 27 20:53:23: Done successfully. The CPU time used is 0.0 seconds;\n"
    assert kill + done in record
    (job,) = parsing.parse_jobs(record.replace(kill + done, done + kill), NOW)
    assert (job.job_id, job.state, job.reason) == ("615", JobState.COMPLETED, None)


def test_bhist_reads_states_from_events(bhist) -> None:
    assert bhist["321"].state is JobState.QUEUED_HELD  # submitted with hold, never resumed
    assert bhist["104"].state is JobState.COMPLETED  # held, resumed, done
    assert bhist["318"].state is JobState.RUNNING
    assert bhist["320"].alloc.cpus == 2  # "Dispatched to 2 Hosts/Processors"
    assert bhist["103"].partition == "normal"  # from "to Queue <normal>"


def test_a_time_without_a_year_is_the_latest_one_before_now() -> None:
    text = "Job <7>, User <a>, Status <PEND>, Queue <q>, Command <true>\n"
    text += "Tue Dec 30 23:59:00: Submitted from host <h>, CWD </tmp>;\n"
    (job,) = parsing.parse_jobs(text, datetime(2027, 1, 2, tzinfo=UTC))
    assert job.submit_time == datetime(2026, 12, 30, 23, 59, tzinfo=UTC)


def test_the_submission_answer_gives_the_id() -> None:
    assert parsing.submitted_job_id("Job <102> is submitted to default queue <normal>.") == "102"
    assert parsing.submitted_job_id("Job <320> is submitted to queue <short>.\n") == "320"
    assert parsing.submitted_job_id("gpu: No such queue. Job not submitted.") is None


def test_queues_with_limits_and_the_default() -> None:
    queues = {
        q.name: q for q in parsing.parse_queues(recorded("bqueues-l.txt"), recorded("bhosts-w.txt"))
    }
    assert sorted(queues) == ["normal", "short"]
    assert queues["normal"].is_default and not queues["short"].is_default
    assert queues["short"].max_time == timedelta(hours=1)
    assert queues["normal"].max_time == timedelta(days=1)
    assert (queues["normal"].total_cpus, queues["normal"].idle_cpus, queues["normal"].state) == (
        2,
        2,
        "UP",
    )
    assert parsing.queue_process_limit(recorded("bqueues-l.txt")) == {"short": 2, "normal": 2}


def test_hosts_as_nodes() -> None:
    report = parse_nodes_report(recorded("bhosts-w.txt"), recorded("bqueues-l.txt"))
    (node,) = report.nodes
    assert (node.name, node.state, node.cpus_total, node.partitions) == (
        "lsfhead",
        NodeState.IDLE,
        2,
        ("short", "normal"),
    )
    assert [p.name for p in report.partitions] == ["short", "normal"]


@pytest.mark.parametrize(
    ("said", "kind"),
    [
        ("gpu: No such queue. Job not submitted.", RejectKind.INVALID_PARTITION),
        ("Too many processors requested. Job not submitted.", RejectKind.UNAVAILABLE_RESOURCES),
        (
            "RUNLIMIT: Cannot exceed queue's hard limit(s). Job not submitted.",
            RejectKind.TIME_LIMIT,
        ),
        (
            "normal: Queue does not accept EXCLUSIVE jobs. Job not submitted.",
            RejectKind.UNAVAILABLE_RESOURCES,
        ),
    ],
)
def test_bsub_refusals_are_classified_and_keep_lsfs_words(said, kind) -> None:
    rejected = classify_bsub_error(said)
    assert (rejected.kind, rejected.raw) == (kind, said)
    assert "Job not submitted" not in rejected.message


def test_control_refusals_are_typed() -> None:
    assert isinstance(classify_control_error("Job <987654>: No matching job found"), JobNotFound)
    assert isinstance(
        classify_control_error("Job <102>: Job has already finished"), JobAlreadyEnded
    )
    denied = classify_control_error("Job <106>: User permission denied")
    assert isinstance(denied, PermissionDenied) and "User permission denied" in str(denied)


def test_a_daemon_that_does_not_answer_is_transient() -> None:
    assert is_transient("batch system daemon not responding ... still trying")
    assert is_transient(
        "Failed in an LSF library call: Failed in sending/receiving a message: "
        "Connection reset by peer. Job not submitted."
    )
    assert not is_transient("gpu: No such queue. Job not submitted.")


def test_the_queue_reader_reuses_records_but_not_a_running_jobs() -> None:
    long = recorded("bjobs-l-a-u-all.txt")
    text = with_wide_listing(long)
    reader = BjobsReader()
    first = reader.parse(text, NOW)
    assert first == parsing.parse_jobs(long, NOW)
    later = NOW + timedelta(seconds=30)
    again = reader.parse(text, later)
    assert again == parsing.parse_jobs(long, later)
    for old, new in zip(first, again, strict=True):
        runs = old.start_time is not None and old.end_time is None
        # A running job's elapsed time counts on; every other record is the same object.
        assert (new is not old) if runs else (new is old), new.job_id
    running = next(job for job in again if job.job_id == "318")
    assert running.elapsed_seconds == 53 + 30
