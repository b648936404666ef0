"""The compose stack, started from docker-compose.yml as a site would start it.

``scripts/compose-stack images`` installs Debian's Docker engine and docker-compose and builds
any missing stand-in for the public base images (they stay in Docker's store, so only the
first run on a machine pays for them). The stack runs under its own project name on a free
loopback port, with a self-signed certificate made for the run; it is removed with its
volumes afterwards.
"""

from __future__ import annotations

import json
import os
import secrets
import socket
import subprocess
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PROJECT = "hpcportal-compose-test"
# Debian's client, matching its engine (an unrelated newer client may come first on PATH).
DOCKER = "/usr/bin/docker"
START_TIMEOUT = 900.0


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class Stack:
    port: int
    cert: Path
    env: dict[str, str]
    timings: dict[str, float] = field(default_factory=dict)

    @property
    def base_url(self) -> str:
        return f"https://localhost:{self.port}"

    def compose(self, *args: str, timeout: float = 600) -> str:
        argv = ["docker-compose", "-p", PROJECT, *args]
        done = subprocess.run(
            argv, cwd=ROOT, env=self.env, capture_output=True, text=True, timeout=timeout
        )
        if done.returncode != 0:
            raise AssertionError(f"{argv} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
        return done.stdout

    def containers(self, service: str) -> list[str]:
        return self.compose("ps", "-q", service).split()

    def docker(self, *args: str, timeout: float = 120) -> str:
        done = subprocess.run(
            [DOCKER, *args], capture_output=True, text=True, timeout=timeout, check=True
        )
        return done.stdout

    def health(self, container: str) -> str:
        state = json.loads(self.docker("inspect", "--format", "{{json .State}}", container))
        health = state.get("Health")
        return str(health["Status"]) if health else str(state["Status"])

    def psql(self, sql: str) -> str:
        return self.compose(
            "exec", "-T", "postgres", "psql", "-U", "portal", "-d", "portal", "-At", "-c", sql
        ).strip()


LONG_RUNNING = ("postgres", "web", "poller", "proxy", "slurmctld", "slurmd", "slurmrestd")


def wait_until(check: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")
        time.sleep(1)


def all_healthy(stack: Stack) -> bool:
    for service in LONG_RUNNING:
        ids = stack.containers(service)
        if not ids or any(stack.health(i) != "healthy" for i in ids):
            return False
    return True


def run_step(argv: list[str], timeout: float) -> float:
    started = time.monotonic()
    subprocess.run(argv, cwd=ROOT, check=True, timeout=timeout)
    return time.monotonic() - started


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    assert os.geteuid() == 0, "the compose lane installs and starts Docker: run it as root"
    images = run_step([str(ROOT / "scripts/compose-stack"), "images"], 1800)
    tls = tmp_path_factory.mktemp("tls")
    run_step([str(ROOT / "scripts/compose-stack"), "tls", str(tls)], 60)
    env = {
        **os.environ,
        "PATH": f"/usr/bin:/usr/sbin:{os.environ.get('PATH', '')}",
        "PORTAL_SECRET_KEY": secrets.token_hex(32),
        "PORTAL_TLS_DIR": str(tls),
        "PORTAL_HTTPS_PORT": str(free_port()),
        # Beside a trial stack on the default range, if one runs.
        "PORTAL_COMPOSE_SUBNET": "172.31.241.0/24",
        # One worker per replica: two replicas already share the machine's two cores.
        "PORTAL_WEB_WORKERS": "1",
    }
    stack = Stack(port=int(env["PORTAL_HTTPS_PORT"]), cert=tls / "portal.crt", env=env)
    stack.timings["stand-in images (0 when cached)"] = images
    stack.compose("down", "-v", "--remove-orphans")
    try:
        started = time.monotonic()
        stack.compose("up", "-d", "--build", timeout=START_TIMEOUT)
        wait_until(lambda: all_healthy(stack), START_TIMEOUT, "every service healthy")
        stack.timings["up --build until healthy"] = time.monotonic() - started
        yield stack
    finally:
        logs = subprocess.run(
            ["docker-compose", "-p", PROJECT, "logs", "--no-color", "--tail", "200"],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        (ROOT / "test-artifacts").mkdir(exist_ok=True)
        (ROOT / "test-artifacts/compose-stack.log").write_text(logs.stdout + logs.stderr)
        stack.compose("down", "-v", "--remove-orphans")
