"""The real local Slurm cluster, reached as the portal's service identity."""

from __future__ import annotations

import asyncio
import os
import subprocess
from collections.abc import AsyncIterator

import pytest

from app.scheduler.base import SchedulerAdapter
from app.scheduler.config import load_clusters
from app.scheduler.registry import build_adapter

CLUSTER = "testcluster"
CLUSTERS_FILE = os.environ.get("PORTAL_CLUSTERS_FILE", "/var/lib/hpcportal-dev/clusters.toml")
TERMINAL_PREFIXES = (
    "COMPLETED",
    "FAILED",
    "CANCELLED",
    "TIMEOUT",
    "OUT_OF_MEMORY",
    "NODE_FAIL",
    "BOOT_FAIL",
    "DEADLINE",
    "PREEMPTED",
)


@pytest.fixture
async def slurm_adapter() -> AsyncIterator[SchedulerAdapter]:
    adapter = build_adapter(load_clusters(CLUSTERS_FILE)[CLUSTER], "ssh")
    yield adapter
    await adapter.close()


def sbatch_as(user: str, account: str, command: str, *extra: str) -> str:
    """Submit with plain sbatch as ``user``, the way people do outside the portal."""
    argv = ["runuser", "-u", user, "--", "sbatch", "--parsable", f"--account={account}"]
    argv += ["--output=/dev/null", *extra, f"--wrap={command}"]
    result = subprocess.run(argv, capture_output=True, text=True, check=True, cwd="/tmp")
    return result.stdout.strip().split(";")[0]


def sacct_rows(*args: str) -> list[dict[str, str]]:
    fields = ["JobID", "Account", "User", "Partition", "State", "AllocCPUS", "ElapsedRaw", "End"]
    argv = ["env", "TZ=UTC", "sacct", "-X", "-a", "--parsable2", "--noheader"]
    argv += [f"--format={','.join(fields)}", *args]
    output = subprocess.run(argv, capture_output=True, text=True, check=True).stdout
    return [dict(zip(fields, line.split("|"), strict=True)) for line in output.splitlines()]


async def wait_until_finished(job_ids: list[str], since: str, timeout: float = 120) -> None:
    """Poll sacct until every job submitted after ``since`` has a terminal state.

    ``since`` matters: the development cluster's ids restart when its state is wiped, and
    older records with the same ids must not count as these jobs.

    The jobs are looked for with a time-window query, the kind ingestion makes: for a few
    seconds after a job ends, ``sacct -j ID`` already shows its end state while a window query
    (``-S`` without ``-j``) does not list the job yet.
    """
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    wanted = set(job_ids)
    while True:
        rows = sacct_rows(f"--starttime={since}", "--endtime=now")
        states = {row["JobID"]: row["State"] for row in rows if row["JobID"] in wanted}
        if len(states) == len(job_ids) and all(
            state.startswith(TERMINAL_PREFIXES) for state in states.values()
        ):
            return
        if loop.time() > deadline:
            pytest.fail(f"jobs not finished after {timeout} s: {states}")
        await asyncio.sleep(0.5)
