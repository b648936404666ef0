"""slurmrestd mapping against responses recorded from each Slurm version and API version."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from app.scheduler.errors import JobNotFound, PermissionDenied, RejectKind, SubmitRejected
from app.scheduler.slurm.parsing import decode_wait_status, parse_sacct
from app.scheduler.slurm.rest import RestRequestFailed, read_response, warning_texts
from app.scheduler.slurm.rest_jobs import RestJobs
from app.scheduler.slurm.rest_parsing import (
    job_from_dbv0038,
    job_from_rest,
    submit_payload,
)
from app.scheduler.slurm.rest_versions import (
    API_VERSIONS,
    choose_version,
    reports_cancel_failures,
    upgrade_ping,
)
from app.scheduler.slurm.squeue import parse_squeue
from app.scheduler.states import JobState
from app.scheduler.types import Gres, JobSpec

# The newest API each release serves that the library speaks.
NEWEST = {"22.05": "v0.0.38", "24.11": "v0.0.42", "26.05": "v0.0.45"}


def by_id(jobs: Any) -> dict[str, Any]:
    return {job.job_id: job for job in jobs}


def rest_jobs(recorded: Any, stem: str) -> dict[str, dict[str, Any]]:
    """``{api: {job id: JobInfo}}`` for every API version recorded under ``stem``."""
    payloads = recorded.rest(stem)
    assert payloads, f"no {stem} recorded for {recorded.version}"
    return {
        api: by_id(job_from_rest(job, api) for job in payload["jobs"])
        for api, payload in payloads.items()
    }


def test_wait_status_decoding() -> None:
    assert decode_wait_status(768) == (3, None)
    assert decode_wait_status(15) == (0, 15)
    assert decode_wait_status(None) == (None, None)


def test_every_recorded_api_version_is_spoken(recorded) -> None:
    assert set(recorded.rest("rest-jobs-finished")) <= set(API_VERSIONS)


def test_discovery_picks_the_newest_api(recorded) -> None:
    paths = recorded.json("rest-openapi-paths.json")
    assert choose_version(paths)[0] == NEWEST[recorded.version]


def test_exit_3_is_failed_with_code_3_in_every_api(recorded) -> None:
    for api, jobs in rest_jobs(recorded, "rest-jobs-finished").items():
        job = jobs[recorded.jobs["exit3"]]
        assert (job.state, job.exit_code, job.signal) == (JobState.FAILED, 3, None), api


def test_array_tasks_and_pending_array_in_every_api(recorded) -> None:
    for api, active in rest_jobs(recorded, "rest-jobs-active").items():
        pending = [j for j in active.values() if j.array_job_id == recorded.jobs["held_array"]]
        assert [j.state for j in pending] == [JobState.QUEUED_HELD], api
        assert (pending[0].array_task_id or "").startswith("["), api
    for api, finished in rest_jobs(recorded, "rest-jobs-finished").items():
        master = recorded.jobs["array"]
        tasks = {j.array_task_id for j in finished.values() if j.array_job_id == master}
        assert tasks == {"1", "2", "3"}, api


def test_held_job_is_held_with_its_comment_and_output_path(recorded) -> None:
    held_id = recorded.jobs["held"]
    for api, active in rest_jobs(recorded, "rest-jobs-active").items():
        held = active[held_id]
        assert held.state is JobState.QUEUED_HELD, api
        assert held.comment == "portal-uuid-0001", api
        assert held.stdout_path == f"{recorded.log_dir}/held-{held_id}.out", api


def test_rest_and_squeue_text_agree_on_finished_jobs(recorded) -> None:
    text_jobs = by_id(parse_squeue(recorded.text("squeue-finished.txt"), recorded.marks))
    for api, rest in rest_jobs(recorded, "rest-jobs-finished").items():
        stable = [k for k, j in text_jobs.items() if j.state.is_terminal and k in rest]
        assert stable, api
        for job_id in stable:
            a, b = text_jobs[job_id], rest[job_id]
            fields = (
                "state",
                "user",
                "account",
                "partition",
                "name",
                "submit_time",
                "exit_code",
                "signal",
                "stdout_path",
                "stderr_path",
                "time_limit",
                "raw_job_id",
            )
            assert [getattr(a, f) for f in fields] == [getattr(b, f) for f in fields], (api, job_id)


def test_ping_answers_up_in_every_api(recorded) -> None:
    for api, payload in recorded.rest("rest-ping").items():
        pings = [upgrade_ping(p, api) for p in payload["pings"]]
        assert any(p["responding"] is True for p in pings), api


def _response(exchange: dict[str, Any], method: str = "POST") -> httpx.Response:
    request = httpx.Request(method, "http://slurmrestd.invalid/slurm/v/job")
    return httpx.Response(exchange["status"], json=exchange["body"], request=request)


def _exchanges(recorded: Any, stem: str) -> dict[str, dict[str, Any]]:
    found = recorded.rest(stem)
    assert found, f"no {stem} recorded for {recorded.version}"
    return found


class RecordedTransport:
    """Answers every call with one recorded exchange, through the real response reader."""

    def __init__(self, api: str, exchange: dict[str, Any]) -> None:
        self.api, self.exchange = api, exchange

    async def version(self) -> str:
        return self.api

    async def call(self, method: str, endpoint: str, **kwargs: Any) -> dict[str, Any]:
        return read_response(_response(self.exchange, method))


async def test_a_held_submission_gives_its_job_id_in_every_api(recorded) -> None:
    # The recorded submission is held: v0.0.38 calls that an error (2042), yet it is queued.
    for api, exchange in _exchanges(recorded, "rest-submit-ok").items():
        jobs = RestJobs(RecordedTransport(api, exchange))  # type: ignore[arg-type]
        job_id = await jobs.submit(JobSpec(script="#!/bin/bash\ntrue\n", name="x"), "alice")
        assert job_id == str(exchange["body"]["job_id"]), api


async def test_a_refused_submission_is_not_taken_for_a_held_one(recorded) -> None:
    for api, exchange in _exchanges(recorded, "rest-submit-bad-account").items():
        jobs = RestJobs(RecordedTransport(api, exchange))  # type: ignore[arg-type]
        with pytest.raises(SubmitRejected) as info:
            await jobs.submit(JobSpec(script="#!/bin/bash\ntrue\n", name="x"), "alice")
        assert info.value.kind is RejectKind.INVALID_ACCOUNT, api


def test_bad_account_is_refused_in_plain_language(recorded) -> None:
    for api, exchange in _exchanges(recorded, "rest-submit-bad-account").items():
        with pytest.raises(RestRequestFailed) as info:
            read_response(_response(exchange))
        error = info.value.as_submit_error()
        assert isinstance(error, SubmitRejected) and error.kind is RejectKind.INVALID_ACCOUNT, api


def test_environment_as_a_dict_is_warned_about(recorded) -> None:
    if recorded.version == "22.05":
        assert not recorded.rest("rest-submit-env-dict")  # v0.0.38 takes only a dict
        return
    for api, exchange in _exchanges(recorded, "rest-submit-env-dict").items():
        assert warning_texts(exchange["body"]), api


@pytest.mark.parametrize(
    ("stem", "error"),
    [("rest-delete-unknown", JobNotFound), ("rest-delete-other-user", PermissionDenied)],
)
def test_a_refused_delete_is_a_typed_failure_where_the_api_reports_it(
    recorded, stem: str, error: type[Exception]
) -> None:
    for api, exchange in _exchanges(recorded, stem).items():
        if api in ("v0.0.40", "v0.0.41"):
            # 200 with nothing in it: cancels go over SSH on these APIs.
            assert not reports_cancel_failures(api)
            assert read_response(_response(exchange, "DELETE")).get("status") is None, api
            continue
        with pytest.raises(RestRequestFailed) as info:
            read_response(_response(exchange, "DELETE"))
        assert isinstance(info.value.as_control_error(), error), (api, exchange)


def test_a_token_for_another_user_is_an_authentication_failure(recorded) -> None:
    for api, exchange in _exchanges(recorded, "rest-wrong-user-token").items():
        with pytest.raises(RestRequestFailed) as info:
            read_response(_response(exchange, "GET"))
        if api == "v0.0.38":
            # 22.05 refuses with HTTP 500 "Unspecified error", without saying why.
            assert info.value.status == 500, exchange
            continue
        assert info.value.is_auth_failure, (api, exchange["status"])


def test_slurmdb_v0038_exit_code_is_not_trusted_for_failed_jobs(recorded_2205) -> None:
    raw = recorded_2205.json("rest-db-job-exit3-v0.0.38.json")["jobs"][0]
    # 22.05 reports SUCCESS/0 here although the script ran `exit 3`.
    assert raw["exit_code"]["return_code"] == 0
    job = job_from_dbv0038(raw)
    assert job.state is JobState.FAILED
    assert job.exit_code is None


def test_sacct_json_v0038_maps_like_sacct_text(recorded_2205) -> None:
    jobs = recorded_2205.jobs
    text_jobs = by_id(parse_sacct(recorded_2205.text("sacct.txt")))
    json_jobs = by_id(map(job_from_dbv0038, recorded_2205.json("sacct.json")["jobs"]))
    for job_id in (jobs["hello"], jobs["missing_dir"], jobs["bob"]):
        a, b = text_jobs[job_id], json_jobs[job_id]
        assert (a.state, a.signal, a.user, a.account) == (b.state, b.signal, b.user, b.account)
        assert a.start_time == b.start_time and a.end_time == b.end_time
        assert a.alloc.cpus == b.alloc.cpus


SPEC = JobSpec(
    script="#!/bin/bash\n",
    name="x",
    time_limit=5,
    memory_mb=200,
    nodes=1,
    gres=(Gres("gpu", 1, "a100"),),
    environment={"A": "1,2"},
    begin="now+60",
    hold=True,
)


def test_v0038_payload_sends_the_script_beside_the_job_and_a_dict_environment() -> None:
    body = submit_payload(SPEC, "/home/alice", "v0.0.38", now=1000.0)
    assert body["script"] == "#!/bin/bash\n"
    assert body["job"]["environment"] == {"A": "1,2"}
    assert body["job"]["time_limit"] == 5 and body["job"]["gres"] == "gpu:a100:1"


@pytest.mark.parametrize("api", [v for v in API_VERSIONS if v != "v0.0.38"])
def test_v0040_on_payload_has_numbers_as_objects_and_a_k_v_environment(api: str) -> None:
    job = submit_payload(SPEC, "/home/alice", api, now=1000.0)["job"]
    assert job["script"] == "#!/bin/bash\n"
    assert job["environment"] == ["A=1,2"]
    assert job["time_limit"] == {"set": True, "infinite": False, "number": 5}
    assert job["memory_per_node"]["number"] == 200
    assert job["begin_time"]["number"] == 1060
    assert (job["minimum_nodes"], job["tres_per_node"], job["hold"]) == (1, "gres/gpu:a100:1", True)
    assert job["current_working_directory"] == "/home/alice"
    assert "argv" not in job


def test_script_arguments_travel_as_argv_after_a_placeholder_from_v0040() -> None:
    spec = JobSpec(script="#!/bin/bash\n", name="x", args=("a b", ""))
    job = submit_payload(spec, "/home/alice", "v0.0.42", now=0.0)["job"]
    assert job["argv"] == ["script", "a b", ""]
    # 22.05's slurmrestd exits on argv: the adapter sends such jobs over SSH instead.
    with pytest.raises(ValueError, match="arguments"):
        submit_payload(spec, "/home/alice", "v0.0.38", now=0.0)
