"""``hpcportal apps`` and ``hpcportal sessions`` against a recorded API."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from app.cli import sessions
from app.cli.client import CliError, PortalClient
from app.cli.config import ClientConfig
from app.cli.exit_codes import ExitCode
from app.cli.main import build_parser

CONFIG = ClientConfig(url="http://portal.test", token="hpc_secret")
RUNNING = {
    "id": 5, "app": "jupyterlab", "state": "running", "job_id": 9, "node": "c7",
    "seconds_left": 1700, "connect_url": "http://portal.test/apps/sessions/u-1/",
}  # fmt: skip


class Recorded:
    def __init__(self, answers: dict[tuple[str, str], list[Any]]) -> None:
        self.answers = answers
        self.requests: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        queue = self.answers[(request.method, request.url.path)]
        body = queue.pop(0) if len(queue) > 1 else queue[0]
        return httpx.Response(200, json=body)


def _run(recorded: Recorded, *argv: str) -> ExitCode:
    args = build_parser().parse_args(list(argv))
    client = PortalClient(CONFIG, transport=httpx.MockTransport(recorded))
    code: ExitCode = args.run(client, args)
    return code


def test_launch_waits_until_the_session_runs_and_prints_where_to_connect(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(sessions, "POLL_SECONDS", 0)
    recorded = Recorded(
        {
            ("GET", "/api/v1/projects"): [[{"id": 3}]],
            ("POST", "/api/v1/sessions"): [RUNNING | {"state": "queued", "connect_url": None}],
            ("GET", "/api/v1/sessions/5"): [RUNNING | {"state": "starting"}, RUNNING],
        }
    )

    code = _run(recorded, "sessions", "launch", "jupyterlab", "--cores", "1", "--wait")

    assert code is ExitCode.OK
    sent = json.loads(recorded.requests[1].content)
    assert sent == {"app": "jupyterlab", "project_id": 3, "cores": 1}
    assert "connect_url   http://portal.test/apps/sessions/u-1/" in capsys.readouterr().out


def test_connect_prints_the_address_and_refuses_a_session_that_is_not_running(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert (
        _run(Recorded({("GET", "/api/v1/sessions/5"): [RUNNING]}), "sessions", "connect", "5") == 0
    )
    assert capsys.readouterr().out == "http://portal.test/apps/sessions/u-1/\n"

    queued = Recorded(
        {("GET", "/api/v1/sessions/5"): [RUNNING | {"state": "queued"} | {"connect_url": None}]}
    )
    with pytest.raises(CliError, match="session 5 is queued, not running"):
        _run(queued, "sessions", "connect", "5")


def test_end_deletes_the_session_and_a_session_that_ends_first_is_a_failure(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    ended = RUNNING | {"state": "ended", "connect_url": None}
    recorded = Recorded({("DELETE", "/api/v1/sessions/5"): [ended]})
    assert _run(recorded, "--json", "sessions", "end", "5") is ExitCode.OK
    assert recorded.requests[0].method == "DELETE"

    monkeypatch.setattr(sessions, "POLL_SECONDS", 0)
    gone = Recorded(
        {
            ("POST", "/api/v1/sessions"): [RUNNING | {"state": "queued"}],
            ("GET", "/api/v1/sessions/5"): [ended],
        }
    )
    with pytest.raises(CliError) as failed:
        _run(gone, "sessions", "launch", "jupyterlab", "--project", "3", "--wait")
    assert failed.value.exit_code is ExitCode.JOB_FAILED


def test_keep_asks_the_portal_to_keep_the_session(capsys: pytest.CaptureFixture[str]) -> None:
    kept = RUNNING | {"idle_since": None, "idle_ends_at": None}
    recorded = Recorded({("POST", "/api/v1/sessions/5/keep"): [kept]})

    assert _run(recorded, "--json", "sessions", "keep", "5") is ExitCode.OK
    assert recorded.requests[0].method == "POST"
    assert json.loads(capsys.readouterr().out)["idle_ends_at"] is None


def test_a_desktop_is_shared_listed_and_unshared(capsys: pytest.CaptureFixture[str]) -> None:
    carol = {"id": 3, "login": "carol", "display_name": "Carol"}
    recorded = Recorded(
        {
            ("POST", "/api/v1/sessions/5/viewers"): [carol],
            ("GET", "/api/v1/sessions/5/viewers"): [[carol]],
            ("DELETE", "/api/v1/sessions/5/viewers/3"): [None],
        }
    )

    assert _run(recorded, "sessions", "share", "5", "carol") is ExitCode.OK
    assert _run(recorded, "sessions", "viewers", "5") is ExitCode.OK
    assert _run(recorded, "sessions", "unshare", "5", "3") is ExitCode.OK

    assert json.loads(recorded.requests[0].content) == {"login": "carol"}
    assert [r.method for r in recorded.requests] == ["POST", "GET", "DELETE"]
    out = [line.split() for line in capsys.readouterr().out.splitlines()]
    assert out[:3] == [["id", "3"], ["login", "carol"], ["display_name", "Carol"]]
    assert out[3:5] == [["ID", "LOGIN", "DISPLAY_NAME"], ["3", "carol", "Carol"]]
    assert out[5:] == [["viewer", "3", "can", "no", "longer", "watch", "session", "5"]]
