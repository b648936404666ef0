"""``python -m app.serve``: uvicorn with one web worker per CPU, or PORTAL_WEB_WORKERS."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import yaml

from app.config import Settings, available_cpus
from app.serve import uvicorn_command

ROOT = Path(__file__).resolve().parents[2]
OPTIONS = ["--host", "127.0.0.1", "--port", "8000", "--no-proxy-headers"]


def _workers(command: list[str]) -> int:
    return int(command[command.index("--workers") + 1])


def test_the_portal_serves_with_one_worker_per_cpu_by_default(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("PORTAL_WEB_WORKERS", raising=False)
    command = uvicorn_command(Settings(), OPTIONS)

    assert command[:5] == [sys.executable, "-m", "uvicorn", "--factory", "app.main:create_app"]
    assert _workers(command) == available_cpus()
    assert command[-len(OPTIONS) :] == OPTIONS


def test_the_setting_chooses_another_number_of_workers(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PORTAL_WEB_WORKERS", "3")
    assert _workers(uvicorn_command(Settings(), OPTIONS)) == 3
    monkeypatch.setenv("PORTAL_WEB_WORKERS", "")
    assert Settings().web_worker_count == available_cpus()


def test_workers_are_never_given_twice() -> None:
    with pytest.raises(SystemExit, match="PORTAL_WEB_WORKERS"):
        uvicorn_command(Settings(), [*OPTIONS, "--workers", "4"])


@pytest.mark.parametrize("value", ["0", "-1", "many"])
def test_a_bad_number_of_workers_is_refused(value: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PORTAL_WEB_WORKERS", value)
    with pytest.raises(ValueError, match="web_workers"):
        Settings()


def test_the_compose_web_service_and_the_run_script_serve_through_app_serve() -> None:
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    web = compose["services"]["web"]

    assert web["command"][:3] == ["python", "-m", "app.serve"]
    assert "--workers" not in web["command"]
    assert "PORTAL_WEB_WORKERS" in web["environment"]
    assert web["environment"]["PORTAL_DATABASE_URL"].startswith("postgresql")
    run = (ROOT / "scripts" / "run").read_text()
    assert '-m app.serve --host "$HOST"' in run and "bin/uvicorn" not in run
