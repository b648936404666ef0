"""How tests reach the LSF development cluster (``scripts/dev-cluster up --scheduler lsf``).

OpenLava 2.2 on one host, ``lsfhead``, with its clusters file under
``/var/lib/hpcportal-dev/lsf/``; ``tests/other_schedulers.py`` says how a run that asked for
it (``PORTAL_TEST_SCHEDULERS``) fails rather than skips when it is down.
"""

from __future__ import annotations

import subprocess

from app.scheduler.config import ClusterConfig
from tests.other_schedulers import run_on, scheduler_cluster


def lsf_config() -> ClusterConfig:
    """The LSF cluster's configuration; skips (or fails, when asked for) if it is down."""
    return scheduler_cluster("lsf")


def run_on_lsf(argv: list[str]) -> subprocess.CompletedProcess[str]:
    """Run ``argv`` as root on the LSF host, with LSF's commands on PATH."""
    return run_on("lsf", argv)
