from __future__ import annotations

import argparse
import json
import stat
from pathlib import Path

import httpx
import pytest

from app.cli import commands
from app.cli.client import ApiError, CliError, PortalClient, parse_sse
from app.cli.config import ClientConfig, ConfigMissing, load_config, save_config
from app.cli.exit_codes import ExitCode, for_final_state
from app.cli.main import build_parser

CONFIG = ClientConfig(url="http://portal.test", token="hpc_secret")


def client_answering(handler: httpx.MockTransport) -> PortalClient:
    return PortalClient(CONFIG, transport=handler)


def test_config_file_is_private_and_round_trips(tmp_path: Path) -> None:
    env = {"HPCPORTAL_CONFIG": str(tmp_path / "c" / "config.toml")}
    path = save_config(CONFIG, env)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert load_config(env) == CONFIG


def test_environment_overrides_file(tmp_path: Path) -> None:
    env = {"HPCPORTAL_CONFIG": str(tmp_path / "config.toml")}
    save_config(CONFIG, env)
    env |= {"HPCPORTAL_TOKEN": "hpc_other", "HPCPORTAL_URL": "http://x/"}
    assert load_config(env) == ClientConfig(url="http://x", token="hpc_other")


def test_missing_config_says_how_to_set_it(tmp_path: Path) -> None:
    with pytest.raises(ConfigMissing, match="hpcportal configure"):
        load_config({"HPCPORTAL_CONFIG": str(tmp_path / "none.toml")})


@pytest.mark.parametrize(
    ("status", "code"),
    [
        (401, ExitCode.AUTH),
        (403, ExitCode.AUTH),
        (404, ExitCode.NOT_FOUND),
        (422, ExitCode.ERROR),
        (503, ExitCode.UNREACHABLE),
    ],
)
def test_api_errors_map_to_exit_codes(status: int, code: ExitCode) -> None:
    body = {"error": "X", "detail": "nope"}
    client = client_answering(httpx.MockTransport(lambda r: httpx.Response(status, json=body)))
    with pytest.raises(ApiError) as caught:
        client.get("/jobs/1")
    assert caught.value.exit_code == code


def test_unreachable_portal_is_exit_5() -> None:
    def refuse(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("refused", request=request)

    with pytest.raises(Exception) as caught:
        client_answering(httpx.MockTransport(refuse)).get("/me")
    assert getattr(caught.value, "exit_code", None) == ExitCode.UNREACHABLE


def test_final_states_map_to_exit_codes() -> None:
    assert for_final_state("completed") == ExitCode.OK
    assert for_final_state("failed") == ExitCode.JOB_FAILED
    assert for_final_state("out_of_memory") == ExitCode.JOB_FAILED
    assert for_final_state("cancelled") == ExitCode.JOB_CANCELLED
    assert for_final_state("timeout") == ExitCode.JOB_TIMEOUT


def test_sse_parser_joins_data_lines_and_keeps_ids() -> None:
    lines = iter(["id: 5", "event: log", 'data: {"data": "a"}', "", "event: end", "data: {}", ""])
    events = list(parse_sse(lines))
    assert [(e.event, e.id) for e in events] == [("log", "5"), ("end", None)]
    assert json.loads(events[0].data) == {"data": "a"}


def test_following_stops_with_the_streams_error_after_the_output_so_far(
    capsys: pytest.CaptureFixture[str],
) -> None:
    body = (
        ": ping\n\n"
        'event: log\ndata: {"data": "partial\\n"}\nid: 8\n\n'
        'event: error\ndata: {"error": "NotFound", "detail": "This job has no log file yet."}\n\n'
        'event: end\ndata: {"job_id": 3}\n\n'
    )

    def answer(request: httpx.Request) -> httpx.Response:
        assert request.url.path == "/api/v1/jobs/3/logs/stdout/follow"
        return httpx.Response(200, text=body, headers={"content-type": "text/event-stream"})

    args = build_parser().parse_args(["logs", "3", "--follow"])
    with pytest.raises(CliError) as stopped:
        commands.logs(client_answering(httpx.MockTransport(answer)), args)
    assert (stopped.value.message, stopped.value.exit_code) == (
        "This job has no log file yet.",
        ExitCode.ERROR,
    )
    assert capsys.readouterr().out == "partial\n"


def test_submit_sends_parameters_and_an_idempotency_key() -> None:
    seen: list[httpx.Request] = []

    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(201, json={"id": 9, "state": "pending"})

    args = build_parser().parse_args(["--json", "submit", "4", "-p", "who=world", "-p", "n=2"])
    code = commands.submit(client_answering(httpx.MockTransport(answer)), args)
    assert code == ExitCode.OK
    assert json.loads(seen[0].content)["parameters"] == {"who": "world", "n": "2"}
    assert seen[0].headers["Idempotency-Key"]


def test_wait_returns_the_jobs_failure_code(monkeypatch: pytest.MonkeyPatch) -> None:
    states = iter(["running", "failed"])

    def answer(request: httpx.Request) -> httpx.Response:
        state = next(states)
        body = {"id": 3, "state": state, "is_finished": state == "failed", "exit_code": 3}
        return httpx.Response(200, json=body)

    monkeypatch.setattr(commands, "WAIT_INTERVAL", 0.01)
    args = argparse.Namespace(job=3, timeout=None, json=True)
    assert commands.wait(client_answering(httpx.MockTransport(answer)), args) == ExitCode.JOB_FAILED


def test_wait_gives_up_after_timeout() -> None:
    body = {"id": 3, "state": "running", "is_finished": False, "exit_code": None}
    client = client_answering(httpx.MockTransport(lambda r: httpx.Response(200, json=body)))
    args = argparse.Namespace(job=3, timeout=0.05, json=True)
    assert commands.wait(client, args) == ExitCode.WAIT_TIMEOUT


def test_bad_parameter_is_a_usage_error() -> None:
    with pytest.raises(Exception) as caught:
        commands.parse_parameters(["novalue"])
    assert getattr(caught.value, "exit_code", None) == ExitCode.USAGE


@pytest.mark.parametrize(("flags", "mine"), [([], "true"), (["--projects"], "false")])
def test_jobs_list_shows_your_own_jobs_unless_asked_for_your_projects(
    flags: list[str], mine: str
) -> None:
    asked: list[httpx.Request] = []

    def answer(request: httpx.Request) -> httpx.Response:
        asked.append(request)
        return httpx.Response(200, json={"items": [], "next": None})

    args = build_parser().parse_args(["jobs", "list", "--json", *flags])
    assert commands.jobs_list(client_answering(httpx.MockTransport(answer)), args) == ExitCode.OK
    assert asked[0].url.params["mine"] == mine


def test_jobs_list_takes_the_job_pages_filters() -> None:
    asked: list[httpx.Request] = []

    def answer(request: httpx.Request) -> httpx.Response:
        asked.append(request)
        return httpx.Response(200, json={"items": [], "next": None})

    flags = [
        "--search",
        "169_2",
        "--template",
        "4",
        "--since",
        "2026-01-01",
        "--until",
        "2026-02-01",
    ]
    args = build_parser().parse_args(["jobs", "list", "--json", *flags])
    assert commands.jobs_list(client_answering(httpx.MockTransport(answer)), args) == ExitCode.OK
    sent = asked[0].url.params
    assert (sent["q"], sent["template_id"]) == ("169_2", "4")
    assert (sent["since"], sent["until"]) == ("2026-01-01", "2026-02-01")
    assert "state" not in sent  # what was not asked for is not sent


def test_tasks_reads_every_page_then_prints_the_counts(capsys: pytest.CaptureFixture[str]) -> None:
    pages = {
        None: {"items": [{"array_task_id": 1, "state": "completed"}], "next_cursor": "c2"},
        "c2": {"items": [{"array_task_id": 2, "state": "failed"}], "next_cursor": None},
    }

    def answer(request: httpx.Request) -> httpx.Response:
        assert request.url.path == "/api/v1/jobs/9/tasks"
        page = pages[request.url.params.get("cursor")]
        usage = {"longest_task_seconds": 75, "cpu_efficiency_percent": 50.0, "max_rss_bytes": None}
        body = {**page, "counts": {"completed": 1, "failed": 1}, "usage": usage}
        return httpx.Response(200, json=body)

    args = build_parser().parse_args(["tasks", "9"])
    assert commands.tasks(client_answering(httpx.MockTransport(answer)), args) == ExitCode.OK
    printed = capsys.readouterr().out
    assert "completed" in printed and "failed" in printed
    assert printed.rstrip().endswith("1 completed, 1 failed")
    assert "longest task 75 s; CPU efficiency 50.0 %; most memory —" in printed


@pytest.mark.parametrize(
    ("answer", "printed", "code"),
    [
        ({"script": "#!/bin/bash\necho hi\n", "source": "slurm"}, "#!/bin/bash\necho hi\n", 0),
        ({"script": "", "source": "gone"}, "Slurm no longer keeps the script", 4),
    ],
)
def test_script_prints_the_job_script_byte_for_byte_or_says_it_is_gone(
    capsys: pytest.CaptureFixture[str], answer: dict[str, str], printed: str, code: int
) -> None:
    def reply(request: httpx.Request) -> httpx.Response:
        assert request.url.path == "/api/v1/jobs/5/script"
        return httpx.Response(200, json=answer)

    args = build_parser().parse_args(["jobs", "script", "5"])
    assert commands.jobs_script(client_answering(httpx.MockTransport(reply)), args) == code
    out = capsys.readouterr().out
    assert out == printed if code == 0 else printed in out


def test_retry_says_which_tasks_run_again(capsys: pytest.CaptureFixture[str]) -> None:
    def answer(request: httpx.Request) -> httpx.Response:
        assert (request.method, request.url.path) == ("POST", "/api/v1/jobs/9/retry-failed")
        return httpx.Response(201, json={"id": 12, "array_spec": "3,7,12"})

    args = build_parser().parse_args(["retry", "9", "--failed"])
    code = commands.retry_failed(client_answering(httpx.MockTransport(answer)), args)
    assert code == ExitCode.OK
    assert capsys.readouterr().out == "job 12 runs tasks 3,7,12 of job 9\n"
