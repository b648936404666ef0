"""``hpcportal workflows``: a file of steps saved as the API expects, runs followed until settled.

The fake portal checks each body against the API's own models and answers with them, so the
client and the API cannot drift apart unnoticed.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from app.api.v1.workflow_schemas import RunOut, WorkflowIn, WorkflowOut
from app.cli import workflows
from app.cli.client import CliError, PortalClient
from app.cli.config import ClientConfig
from app.cli.exit_codes import ExitCode
from app.cli.main import build_parser, run

NOW = "2026-11-27T17:00:00Z"
STUCK = "A job it depends on ended in a way its dependency does not accept, so it will never start"


def _client(answer: Any) -> PortalClient:
    config = ClientConfig("http://portal.test", "hpc_x")
    return PortalClient(config, transport=httpx.MockTransport(answer))


def _step(
    name: str, state: str | None, after: tuple[str, ...] = (), **extra: Any
) -> dict[str, Any]:
    return {
        "name": name,
        "after": list(after),
        "kind": "afterok",
        "level": len(after),
        "job_id": 7 if state else None,
        "slurm_job_id": "905" if state else None,
        "state": state,
        "attempts": 1 if state else 0,
        **extra,
    }


def _run(*steps: dict[str, Any], can_run_again: bool = False) -> dict[str, Any]:
    body = {
        "id": 3,
        "workflow_id": 12,
        "owner_user_id": 1,
        "created_at": NOW,
        "can_run_again": can_run_again,
        "steps": list(steps),
    }
    return RunOut.model_validate(body).model_dump(mode="json")


def test_create_reads_each_script_file_beside_the_workflow_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "steps").mkdir()
    (tmp_path / "steps" / "prepare.sh").write_text("#!/bin/bash\n./prepare 'a b'\n")
    (tmp_path / "flow.toml").write_text(
        'project_id = 4\nname = "prepare-compute"\n\n'
        '[[steps]]\nname = "prepare"\nscript_file = "steps/prepare.sh"\n\n'
        '[[steps]]\nname = "compute"\nscript = "#!/bin/bash\\n./compute\\n"\n'
        'after = ["prepare"]\n'
    )
    sent: list[dict[str, Any]] = []

    def answer(request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        sent.append(body)
        accepted = WorkflowIn.model_validate(body)
        saved = WorkflowOut(
            id=12, owner_user_id=1, created_at=NOW, **accepted.model_dump(mode="json")
        )
        return httpx.Response(201, json=saved.model_dump(mode="json"))

    args = build_parser().parse_args(["workflows", "create", str(tmp_path / "flow.toml")])
    assert args.run(_client(answer), args) == ExitCode.OK
    [body] = sent
    assert body["project_id"] == 4
    assert [step["script"] for step in body["steps"]] == [
        "#!/bin/bash\n./prepare 'a b'\n",
        "#!/bin/bash\n./compute\n",
    ]
    assert "script_file" not in body["steps"][0]
    assert capsys.readouterr().out == "workflow 12 saved: prepare-compute (2 steps)\n"


@pytest.mark.parametrize(
    ("content", "words"),
    [
        ('{"name": "x", "steps": [', "is not valid JSON"),
        ('{"name": "x", "steps": "prepare"}', "needs a list of steps"),
        ('{"steps": [{"name": "a", "script_file": "missing.sh"}]}', "step 'a': cannot read"),
    ],
)
def test_a_bad_workflow_file_is_refused_before_anything_is_sent(
    tmp_path: Path,
    content: str,
    words: str,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    path = tmp_path / "flow.json"
    path.write_text(content)
    # A portal that cannot be reached: anything sent would end in UNREACHABLE, not USAGE.
    (tmp_path / "config.toml").write_text('url = "http://127.0.0.1:9"\ntoken = "hpc_x"\n')
    monkeypatch.setenv("HPCPORTAL_CONFIG", str(tmp_path / "config.toml"))
    code = run(["workflows", "create", str(path)])
    assert code == ExitCode.USAGE
    assert words in capsys.readouterr().err


def test_run_with_wait_follows_until_a_failed_step_leaves_the_next_waiting_for_ever(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(workflows, "POLL_SECONDS", 0.0)
    answers: Iterator[dict[str, Any]] = iter(
        [
            _run(_step("prepare", "pending"), _step("compute", "pending", ("prepare",))),
            _run(_step("prepare", "running"), _step("compute", "pending", ("prepare",))),
            _run(
                _step("prepare", "failed"),
                _step("compute", "pending", ("prepare",), waiting_explanation=STUCK),
                can_run_again=True,
            ),
        ]
    )
    asked: list[tuple[str, str]] = []

    def answer(request: httpx.Request) -> httpx.Response:
        asked.append((request.method, request.url.path))
        return httpx.Response(201 if request.method == "POST" else 200, json=next(answers))

    args = build_parser().parse_args(["workflows", "run", "12", "--wait"])
    assert args.run(_client(answer), args) == ExitCode.JOB_FAILED
    assert asked == [
        ("POST", "/api/v1/workflows/12/runs"),
        ("GET", "/api/v1/workflows/runs/3"),
        ("GET", "/api/v1/workflows/runs/3"),
    ]
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "run 3 of workflow 12"
    assert lines[1].split()[:4] == ["NAME", "AFTER", "STATE", "SLURM_JOB_ID"]
    assert lines[2].split()[:3] == ["prepare", "-", "failed"]
    assert lines[3].split()[:3] == ["compute", "prepare", "pending"]
    assert STUCK in lines[3]


def test_status_shows_steps_not_submitted_and_rerun_exits_ok_once_all_completed(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(workflows, "POLL_SECONDS", 0.0)
    waiting = _run(_step("prepare", "completed"), _step("compute", None, ("prepare",)))
    done = _run(_step("prepare", "completed"), _step("compute", "completed", ("prepare",)))
    bodies = {"/api/v1/workflows/runs/3": waiting, "/api/v1/workflows/runs/3/rerun": done}

    def answer(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, json=bodies[request.url.path])

    status = build_parser().parse_args(["workflows", "status", "3"])
    assert status.run(_client(answer), status) == ExitCode.OK
    assert "not submitted" in capsys.readouterr().out.splitlines()[3]
    rerun = build_parser().parse_args(["--json", "workflows", "rerun", "3", "--wait"])
    assert rerun.run(_client(answer), rerun) == ExitCode.OK
    assert json.loads(capsys.readouterr().out)["steps"][1]["state"] == "completed"


def test_wait_gives_up_at_its_timeout(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(workflows, "POLL_SECONDS", 0.01)
    running = _run(_step("prepare", "running"))

    def answer(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, json=running)

    args = build_parser().parse_args(["workflows", "run", "12", "--wait", "--timeout", "0.05"])
    with pytest.raises(CliError) as refused:
        args.run(_client(answer), args)
    assert refused.value.exit_code == ExitCode.WAIT_TIMEOUT
    assert str(refused.value.message) == "run 3 has not ended yet"
