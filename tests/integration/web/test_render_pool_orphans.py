"""Preview workers: none left behind by a web process killed with SIGKILL, and none
competing with the web process for the CPU on equal terms."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
# Starts the pool, prints its workers' pids, then waits to be killed.
STARTER = """
import asyncio, sys, time
from app.web import render_pool
asyncio.run(render_pool.warm())
print(*render_pool._pool()._processes, flush=True)
time.sleep(600)
"""


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie is gone for our purposes: it only waits for its new parent to reap it.
    try:
        status = Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0]
    except FileNotFoundError:  # reaped between the signal and the read
        return False
    return status != "Z"


def test_preview_workers_exit_when_the_web_process_is_killed() -> None:
    web = subprocess.Popen(
        [sys.executable, "-c", STARTER], cwd=ROOT, stdout=subprocess.PIPE, text=True
    )
    assert web.stdout is not None
    workers = [int(pid) for pid in web.stdout.readline().split()]
    assert workers and all(_alive(pid) for pid in workers)
    web.send_signal(signal.SIGKILL)
    web.wait(timeout=10)
    deadline = time.monotonic() + 15
    while any(_alive(pid) for pid in workers) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not any(_alive(pid) for pid in workers)


def test_preview_workers_run_below_the_web_process_priority() -> None:
    web = subprocess.Popen(
        [sys.executable, "-c", STARTER], cwd=ROOT, stdout=subprocess.PIPE, text=True
    )
    assert web.stdout is not None
    try:
        workers = [int(pid) for pid in web.stdout.readline().split()]
        assert workers
        expected = {pid: os.getpriority(os.PRIO_PROCESS, web.pid) + 10 for pid in workers}
        # A worker that answered no warm-up call may still be importing, before its initializer.
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            found = {pid: os.getpriority(os.PRIO_PROCESS, pid) for pid in workers}
            if found == expected:
                break
            time.sleep(0.2)
        assert found == expected
    finally:
        web.kill()
        web.wait(timeout=10)
