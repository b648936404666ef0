"""The site clusters: a login node and two compute nodes, each in its own network namespace
(``scripts/dev-cluster up --topology site``). Tests here take ``slurm_version`` as ``V-site``,
so they run one after another in that cluster's own group, beside the other clusters'."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from app.scheduler.config import ClusterConfig
from app.scheduler.registry import build_adapter
from app.scheduler.slurm.adapter import SlurmAdapter
from tests.slurm_versions import cluster_config, site_versions


@pytest.fixture(scope="module", params=site_versions())
def slurm_version(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def site(slurm_version: str) -> ClusterConfig:
    return cluster_config(slurm_version)


@pytest.fixture
async def adapter(site: ClusterConfig) -> AsyncIterator[SlurmAdapter]:
    adapter = build_adapter(site, "ssh")
    yield adapter
    await adapter.close()
