"""The Slurm versions a test run covers, and how tests reach each version's cluster.

``scripts/dev-cluster up --version V`` brings up one cluster per version: 22.05 from the
host's packages (cluster ``testcluster``, clusters file ``PORTAL_CLUSTERS_FILE``), newer ones
in chroots with their own clusters file under ``/var/lib/hpcportal-dev/<V>/``.
``PORTAL_TEST_SLURM_VERSIONS`` (space separated) names the versions to test; ``scripts/test``
sets it to every supported version. A version that was asked for but is not up fails the
test instead of skipping it, so a run never passes by leaving a version out.

``scripts/dev-cluster up --version V-site`` (or ``--version V --topology site``) brings up
another cluster of that version with a login node and two compute nodes; tests name it
``V-site`` (e.g. ``22.05-site``, clusters file under ``/var/lib/hpcportal-dev/22.05-site/``)
wherever they name a version, so ``PORTAL_TEST_SLURM_VERSIONS="22.05-site"`` runs the contract
suite and the poller tests on it.
``PORTAL_TEST_SITE_VERSIONS`` names the versions whose site cluster the multi-node tests use
(default 22.05).
"""

from __future__ import annotations

import os
import subprocess
from functools import cache
from pathlib import Path

import pytest

from app.scheduler.config import ClusterConfig, load_clusters

HOST_VERSION = "22.05"
SITE = "-site"
KEY_DIR = Path("/var/lib/hpcportal-dev")
DEV_CLUSTER = Path(__file__).resolve().parent.parent / "scripts" / "dev-cluster"


def versions() -> list[str]:
    """The Slurm versions this run tests, oldest first."""
    return os.environ.get("PORTAL_TEST_SLURM_VERSIONS", HOST_VERSION).split()


def site_versions() -> list[str]:
    """The site (multi-node) clusters this run tests, as ``V-site``."""
    return [f"{v}{SITE}" for v in os.environ.get("PORTAL_TEST_SITE_VERSIONS", HOST_VERSION).split()]


def _asked_for_explicitly(version: str) -> bool:
    name = "PORTAL_TEST_SITE_VERSIONS" if version.endswith(SITE) else "PORTAL_TEST_SLURM_VERSIONS"
    return name in os.environ


def clusters_file(version: str) -> Path:
    """The clusters file ``scripts/dev-cluster up --version`` writes for ``version``."""
    if version == HOST_VERSION:
        return Path(os.environ.get("PORTAL_CLUSTERS_FILE", KEY_DIR / "clusters.toml"))
    return KEY_DIR / version / "clusters.toml"


@cache
def _load(version: str) -> ClusterConfig:
    return next(iter(load_clusters(clusters_file(version)).values()))


def cluster_config(version: str) -> ClusterConfig:
    """That version's cluster configuration; skips (or fails, when asked for) if it is down."""
    path = clusters_file(version)
    if not path.exists():
        message = f"{path} missing: run scripts/dev-cluster up --version {version}"
        if _asked_for_explicitly(version):
            pytest.fail(message)
        pytest.skip(message)
    return _load(version)


def run_on(version: str, argv: list[str], **kwargs: object) -> subprocess.CompletedProcess[str]:
    """Run ``argv`` as root where that version's Slurm commands live (chroot or host; a site
    cluster's login node)."""
    full = (
        argv
        if version == HOST_VERSION
        else [str(DEV_CLUSTER), "exec", "--version", version, "--", *argv]
    )
    return subprocess.run(full, capture_output=True, text=True, **kwargs)  # type: ignore[call-overload,no-any-return]


def release(version: str) -> str:
    """The Slurm release a cluster runs: ``"22.05-site"`` -> ``"22.05"``."""
    return version.removesuffix(SITE)


def major_minor(version: str) -> tuple[int, int]:
    """``"24.11"`` -> (24, 11), for behaviour that changed between releases."""
    major, minor = release(version).split(".")[:2]
    return int(major), int(minor)
