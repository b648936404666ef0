"""slurmrestd v0.0.38 / dbv0.0.38 mapping against recorded responses."""

from app.scheduler.slurm.rest_parsing import (
    decode_wait_status,
    job_from_dbv0038,
    job_from_v0038,
    submit_payload_v0038,
)
from app.scheduler.states import JobState
from app.scheduler.types import JobSpec


def rest_jobs(recorded, name):
    return {j.job_id: j for j in map(job_from_v0038, recorded.json(name)["jobs"])}


def test_wait_status_decoding() -> None:
    assert decode_wait_status(768) == (3, None)
    assert decode_wait_status(15) == (0, 15)
    assert decode_wait_status(None) == (None, None)


def test_rest_exit_code_comes_from_the_raw_wait_status(recorded) -> None:
    job = rest_jobs(recorded, "rest-jobs-finished.json")[recorded.jobs["exit3"]]
    assert job.state is JobState.FAILED
    assert (job.exit_code, job.signal) == (3, None)


def test_rest_array_tasks_and_pending_array(recorded) -> None:
    active = rest_jobs(recorded, "rest-jobs-active.json")
    held_array = recorded.jobs["held_array"]
    pending = [j for j in active.values() if j.array_job_id == held_array]
    assert [j.state for j in pending] == [JobState.QUEUED_HELD]
    assert pending[0].array_task_id is not None and pending[0].array_task_id.startswith("[")
    finished = rest_jobs(recorded, "rest-jobs-finished.json")
    master = recorded.jobs["array"]
    tasks = {j.array_task_id for j in finished.values() if j.array_job_id == master}
    assert tasks == {"1", "2", "3"}


def test_rest_and_squeue_json_have_the_same_shape(recorded) -> None:
    rest = recorded.json("rest-jobs-finished.json")
    cli = recorded.json("squeue-finished.json")
    assert set(rest["jobs"][0]) == set(cli["jobs"][0])


def test_slurmdb_exit_code_is_not_trusted_for_failed_jobs(recorded) -> None:
    raw = recorded.json("rest-db-job-exit3.json")["jobs"][0]
    # 22.05 reports SUCCESS/0 here although the script ran `exit 3`.
    assert raw["exit_code"]["return_code"] == 0
    job = job_from_dbv0038(raw)
    assert job.state is JobState.FAILED
    assert job.exit_code is None


def test_sacct_json_maps_like_sacct_text(recorded) -> None:
    from app.scheduler.slurm.parsing import parse_sacct

    text_jobs = {j.job_id: j for j in parse_sacct(recorded.text("sacct.txt"))}
    json_jobs = {j.job_id: j for j in map(job_from_dbv0038, recorded.json("sacct.json")["jobs"])}
    assert set(json_jobs) <= set(text_jobs) | {
        j for j in json_jobs if "[" in j or j == recorded.jobs["held_array"]
    }
    for job_id in (recorded.jobs["hello"], recorded.jobs["missing_dir"], recorded.jobs["bob"]):
        a, b = text_jobs[job_id], json_jobs[job_id]
        assert (a.state, a.signal, a.user, a.account) == (b.state, b.signal, b.user, b.account)
        assert a.start_time == b.start_time and a.end_time == b.end_time
        assert a.alloc.cpus == b.alloc.cpus


def test_submit_payload_always_carries_cwd_and_environment() -> None:
    body = submit_payload_v0038(JobSpec(script="#!/bin/bash\n", name="x"), "/home/alice")
    assert body["job"]["current_working_directory"] == "/home/alice"
    assert isinstance(body["job"]["environment"], dict) and body["job"]["environment"]
    assert body["script"] == "#!/bin/bash\n"
