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
