"""Clusters run by schedulers other than Slurm, and how tests reach them.

``scripts/dev-cluster up --scheduler pbs`` brings up an OpenPBS cluster (``pbscluster``, host
``pbshead``), ``--scheduler lsf`` an OpenLava 2.2 one (host ``lsfhead``); each writes its
clusters file under ``/var/lib/hpcportal-dev/<scheduler>/``.
``PORTAL_TEST_SCHEDULERS`` (space separated; ``scripts/test`` sets it) names the schedulers a
run must test: one asked for but not up fails its tests instead of skipping them. Tests on
such a cluster are marked with the scheduler's name (``pytest.mark.pbs``) and run in one
pytest-xdist group of that name (``tests/lanes.py``), one after another.
"""

from __future__ import annotations

import os
import subprocess
from functools import cache
from pathlib import Path

import pytest

from app.scheduler.config import ClusterConfig, load_clusters
from tests.slurm_versions import DEV_CLUSTER, KEY_DIR

SCHEDULERS = ("pbs", "lsf")


def asked_for() -> list[str]:
    """The schedulers this run must test."""
    return os.environ.get("PORTAL_TEST_SCHEDULERS", "").split()


def clusters_file(scheduler: str) -> Path:
    """The clusters file ``scripts/dev-cluster up --scheduler`` writes."""
    return KEY_DIR / scheduler / "clusters.toml"


@cache
def _load(scheduler: str) -> ClusterConfig:
    return next(iter(load_clusters(clusters_file(scheduler)).values()))


def scheduler_cluster(scheduler: str) -> ClusterConfig:
    """That scheduler's dev cluster; skips (or fails, when asked for) if it is not up."""
    path = clusters_file(scheduler)
    if not path.exists():
        message = f"{path} missing: run scripts/dev-cluster up --scheduler {scheduler}"
        if scheduler in asked_for():
            pytest.fail(message)
        pytest.skip(message)
    return _load(scheduler)


def run_on(scheduler: str, argv: list[str]) -> subprocess.CompletedProcess[str]:
    """Run ``argv`` as root on that scheduler's head node."""
    full = [str(DEV_CLUSTER), "exec", "--scheduler", scheduler, "--", *argv]
    return subprocess.run(full, capture_output=True, text=True, check=False)


PBS_SERVER_LOGS = Path("/var/lib/hpcportal-pbs/home/server_logs")
# What a PBS test's failure is shown with: the server's starts and stops, and its last words.
PBS_LOG_LINES = 60


def pbs_server_log() -> str:
    """The PBS server's starts and shutdowns of the day, then its last lines: a test that
    fails because the server went away mid-request (``qdel`` then exits 0 having done nothing,
    and a job deleted meanwhile ends "failed") says so."""
    logs = sorted(PBS_SERVER_LOGS.glob("*")) if PBS_SERVER_LOGS.is_dir() else []
    if not logs:
        return f"no server log under {PBS_SERVER_LOGS}"
    lines = logs[-1].read_text(errors="replace").splitlines()
    starts = [line for line in lines if "started, initialization" in line or "hutdown" in line]
    return "\n".join([*starts, "...", *lines[-PBS_LOG_LINES:]])
