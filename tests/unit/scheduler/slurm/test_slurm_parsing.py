"""Parsers against outputs recorded from the real cluster (scripts/capture-slurm-outputs)."""

from datetime import UTC, timedelta

import pytest

from app.scheduler.errors import RejectKind, classify_sbatch_error
from app.scheduler.slurm import parsing, squeue
from app.scheduler.slurm.commands import SEP, SQUEUE_FIELDS
from app.scheduler.states import JobState


def by_id(jobs):
    return {job.job_id: job for job in jobs}


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("1-02:03:04", 93784),
        ("02:03:04", 7384),
        ("10:00", 600),
        ("00:05.123", 5.123),
        ("7-00:00:00", 604800),
        ("60", 3600),
    ],
)
def test_durations(text: str, seconds: float) -> None:
    parsed = parsing.parse_duration(text)
    assert parsed is not None
    assert parsed.total_seconds() == pytest.approx(seconds)


@pytest.mark.parametrize("text", ["UNLIMITED", "infinite", "Partition_Limit", "", "INVALID"])
def test_durations_without_a_value(text: str) -> None:
    assert parsing.parse_duration(text) is None


@pytest.mark.parametrize(
    ("text", "size"),
    [("4208K", 4208 * 1024), ("1.5G", 1536 * 1024**2), ("100M", 100 * 1024**2), ("0", 0)],
)
def test_sizes(text: str, size: int) -> None:
    assert parsing.parse_size(text) == size


def test_tres_with_gpus() -> None:
    tres = parsing.parse_tres("billing=1,cpu=4,gres/gpu=2,gres/gpu:a100=2,mem=100M,node=1")
    assert (tres.cpus, tres.gpus, tres.nodes) == (4, 2, 1)
    assert tres.memory_bytes == 100 * 1024**2


@pytest.mark.parametrize(
    ("job_id", "parts"),
    [("12_3", ("12", "3")), ("12_[4-9%2]", ("12", "[4-9%2]")), ("12", (None, None))],
)
def test_array_ids(job_id: str, parts: tuple[str | None, str | None]) -> None:
    assert parsing.split_array_id(job_id) == parts


def test_output_path_patterns_expand_for_array_tasks() -> None:
    path = parsing.expand_output_path(
        "/home/u/%x-%A_%a-%j-%u%%.out",
        job_id="23_1",
        name="sweep",
        user="u",
        array_job_id="23",
        array_task_id="1",
        raw_job_id="30",
    )
    assert path == "/home/u/sweep-23_1-30-u%.out"


def test_a_tasks_own_number_is_never_guessed_from_its_arrays() -> None:
    path = parsing.expand_output_path(
        "/home/u/%A_%a-%j.out",
        job_id="23_1",
        name="s",
        user="u",
        array_job_id="23",
        array_task_id="1",
    )
    assert path == "/home/u/23_1-%j.out"


def test_array_tasks_carry_their_own_slurm_number(recorded) -> None:
    tasks = [j for j in parsing.parse_sacct(recorded.text("sacct.txt")) if j.array_task_id]
    assert tasks
    for task in tasks:
        assert task.raw_job_id and task.raw_job_id.isdigit(), task.job_id
    # Each task has a number of its own; the one started last keeps its array's.
    assert len({task.raw_job_id for task in tasks}) == len(tasks)
    assert any(task.raw_job_id != task.array_job_id for task in tasks)
    plain = by_id(parsing.parse_sacct(recorded.text("sacct.txt")))[recorded.jobs["hello"]]
    assert plain.raw_job_id == recorded.jobs["hello"]


def test_squeue_records_carry_slurms_own_number(recorded) -> None:
    for job in squeue.parse_squeue(recorded.text("squeue-active.txt"), recorded.marks):
        assert job.raw_job_id and job.raw_job_id.isdigit(), job.job_id


def test_sacct_folds_steps_into_jobs(recorded) -> None:
    jobs = by_id(parsing.parse_sacct(recorded.text("sacct.txt")))
    assert not any("." in job_id for job_id in jobs)
    hello = jobs[recorded.jobs["hello"]]
    assert hello.state is JobState.COMPLETED
    assert (hello.exit_code, hello.signal) == (0, None)
    assert hello.max_rss_bytes is not None and hello.max_rss_bytes > 0
    assert hello.elapsed_seconds is not None and hello.elapsed_seconds >= 8
    assert hello.alloc.cpus == 1
    assert hello.submit_time is not None and hello.submit_time.tzinfo is UTC
    assert hello.user == recorded.user


def test_sacct_exit_3_is_failed_with_code_3(recorded) -> None:
    job = by_id(parsing.parse_sacct(recorded.text("sacct.txt")))[recorded.jobs["exit3"]]
    assert job.state is JobState.FAILED
    assert (job.exit_code, job.signal) == (3, None)


def test_sacct_cancelled_by_uid(recorded) -> None:
    job = by_id(parsing.parse_sacct(recorded.text("sacct.txt")))[recorded.jobs["cancelled"]]
    assert job.state is JobState.CANCELLED
    assert job.native_state.startswith("CANCELLED by ")


def test_sacct_missing_log_dir_fails_the_job_only_before_23_02(recorded) -> None:
    job = by_id(parsing.parse_sacct(recorded.text("sacct.txt")))[recorded.jobs["missing_dir"]]
    if recorded.release < (23, 2):
        assert (job.state, job.signal) == (JobState.FAILED, 53)
    else:
        # slurmstepd creates the folder itself since 23.02.
        assert (job.state, job.exit_code) == (JobState.COMPLETED, 0)


def test_sacct_array_tasks_are_separate_records(recorded) -> None:
    master = recorded.jobs["array"]
    jobs = parsing.parse_sacct(recorded.text("sacct.txt"))
    tasks = sorted((j for j in jobs if j.array_job_id == master), key=lambda j: j.job_id)
    assert [t.job_id for t in tasks] == [f"{master}_{n}" for n in (1, 2, 3)]
    assert all(t.state is JobState.COMPLETED for t in tasks)
    assert len({t.native["JobIDRaw"] for t in tasks}) == 3


def test_sacct_held_jobs_are_held_whatever_their_recorded_reason(recorded) -> None:
    # Accounting keeps no JobHeldUser reason on these versions; priority 0 says held.
    jobs = by_id(parsing.parse_sacct(recorded.text("sacct.txt")))
    held_array = f"{recorded.jobs['held_array']}_[0-9%2]"
    for job in (jobs[recorded.jobs["held"]], jobs[held_array]):
        assert job.state is JobState.QUEUED_HELD, (job.job_id, job.reason)
        assert job.start_time is None and job.exit_code is None


def test_sacct_other_users_are_included(recorded) -> None:
    bob = by_id(parsing.parse_sacct(recorded.text("sacct.txt")))[recorded.jobs["bob"]]
    assert (bob.user, bob.account) == ("bob", "chemistry")


def test_squeue_active_snapshot(recorded) -> None:
    jobs = by_id(squeue.parse_squeue(recorded.text("squeue-active.txt"), recorded.marks))
    held = jobs[recorded.jobs["held"]]
    assert held.state is JobState.QUEUED_HELD
    assert held.comment == "portal-uuid-0001"
    assert held.stdout_path == f"{recorded.log_dir}/held-{recorded.jobs['held']}.out"
    assert held.time_limit == timedelta(minutes=10)
    running = jobs[recorded.jobs["cancelled"]]
    assert running.state is JobState.RUNNING
    assert running.start_time is not None and running.nodes


def test_squeue_finished_jobs_carry_exit_code_and_signal(recorded) -> None:
    jobs = by_id(squeue.parse_squeue(recorded.text("squeue-finished.txt"), recorded.marks))
    failed = jobs[recorded.jobs["exit3"]]
    assert (failed.state, failed.exit_code, failed.signal) == (JobState.FAILED, 3, None)
    cancelled = jobs[recorded.jobs["cancelled"]]
    assert cancelled.state is JobState.CANCELLED
    # Killed by SIGTERM: Slurm reports the signal (0:15), or the batch shell's 128 + 15 when
    # the shell itself outlived its child long enough to exit (143:0, seen on 24.11).
    assert cancelled.signal == 15 or (cancelled.exit_code, cancelled.signal) == (143, None)


def test_squeue_pending_array_is_one_record(recorded) -> None:
    jobs = by_id(squeue.parse_squeue(recorded.text("squeue-active.txt"), recorded.marks))
    pending = jobs[f"{recorded.jobs['held_array']}_[0-9%2]"]
    assert pending.array_job_id == recorded.jobs["held_array"]
    assert pending.array_task_id == "[0-9%2]"


def test_squeue_stderr_without_error_option_is_the_output_file(recorded) -> None:
    # 22.05 repeats the output pattern, 23.02 and later print "(null)".
    jobs = by_id(squeue.parse_squeue(recorded.text("squeue-finished.txt"), recorded.marks))
    hello = jobs[recorded.jobs["hello"]]
    assert hello.stdout_path == f"{recorded.log_dir}/hello-{recorded.jobs['hello']}.out"
    assert hello.stderr_path == hello.stdout_path


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        ("invalid-account", RejectKind.INVALID_ACCOUNT),
        ("invalid-partition", RejectKind.INVALID_PARTITION),
        ("bad-directive", RejectKind.BAD_DIRECTIVE),
        ("bad-gres", RejectKind.UNAVAILABLE_RESOURCES),
        ("time-limit", RejectKind.TIME_LIMIT),
    ],
)
def test_recorded_sbatch_refusals_are_classified(recorded, name: str, kind: RejectKind) -> None:
    path = recorded.root / f"sbatch-error-{name}.txt"
    assert path.exists(), f"{recorded.version} accepted what it should refuse: {name}"
    assert classify_sbatch_error(path.read_text()).kind is kind


def test_sinfo_partitions(recorded) -> None:
    parts = {p.name: p for p in parsing.parse_sinfo(recorded.text("sinfo.txt"))}
    assert parts["debug"].is_default and not parts["long"].is_default
    assert parts["debug"].max_time == timedelta(hours=1)
    assert parts["long"].max_time == timedelta(days=7)
    assert parts["debug"].total_cpus >= parts["debug"].idle_cpus


def test_associations(recorded) -> None:
    assocs = parsing.parse_associations(recorded.text("sacctmgr-assoc-alice.txt"))
    assert [a.account for a in assocs] == ["physics"]
    assert "normal" in assocs[0].qos


def test_read_chunk_output_splits_size_from_data() -> None:
    assert parsing.parse_read_chunk(b"11\nhello\nworld", 0) == (11, b"hello\nworld")
    with pytest.raises(ValueError, match="size"):
        parsing.parse_read_chunk(b"", 0)


def test_gres_by_partition_with_types_counts_and_socket_lists() -> None:
    text = "debug\x1fgpu:a100:2\nlong\x1fgpu:a100:2(S:0,1),gpu:v100:4,mps:100\ncpu\x1f(null)\n"
    assert parsing.parse_gres(text) == {
        "debug": {("gpu", "a100")},
        "long": {("gpu", "a100"), ("gpu", "v100"), ("mps", "")},
        "cpu": set(),
    }


def _records(text: str) -> list[str]:
    """The recorded listing's records, each with its end."""
    return [line for line in text.split("\n") if line.strip()]


def test_squeue_reader_reuses_the_records_of_unchanged_lines(recorded) -> None:
    active, finished = recorded.text("squeue-active.txt"), recorded.text("squeue-finished.txt")
    reader = squeue.SqueueReader(recorded.marks)
    first = reader.parse(active)
    assert first == squeue.parse_squeue(active, recorded.marks)
    again = reader.parse(active)
    assert again == first and all(a is b for a, b in zip(again, first, strict=True))
    later = reader.parse(finished)
    assert later == squeue.parse_squeue(finished, recorded.marks)
    unchanged = set(active.split("\n")) & set(finished.split("\n"))
    reused = [info for info in later if any(info is old for old in first)]
    assert len(reused) == len([line for line in unchanged if line.strip()])


def test_squeue_reader_never_gives_one_jobs_record_for_another_jobs_line(recorded) -> None:
    """Records are remembered by the hash of their text: a record kept under a hash that
    is not that record's job (two records sharing a hash) is read again, not reused."""
    active = recorded.text("squeue-active.txt")
    lines = [line for line in active.split("\n") if line.strip()]
    assert len({squeue.parse_squeue(line, recorded.marks)[0].job_id for line in lines}) >= 2
    reader = squeue.SqueueReader(recorded.marks)
    first = reader.parse(active)
    # Every record's hash now names the first record, as a collision would.
    reader._last = {hash(record): first[0] for record in _records(active)}
    again = reader.parse(active)
    assert again == squeue.parse_squeue(active, recorded.marks)
    assert [info.job_id for info in again] == [info.job_id for info in first]


def test_squeue_records_keep_every_raw_field_by_name(recorded) -> None:
    [record, *_] = _records(recorded.text("squeue-active.txt"))
    info = squeue.parse_squeue(record, recorded.marks)[0]
    fields = record.removesuffix(recorded.marks.end).replace(recorded.marks.field, SEP)
    cells = [cell.strip() for cell in fields.split(SEP)]
    expected = dict(zip([key for key, _ in SQUEUE_FIELDS], cells, strict=True))
    assert info.native == expected and dict(info.native) == expected
    assert info.native["job_id"] == info.job_id and len(info.native) == len(SQUEUE_FIELDS)
