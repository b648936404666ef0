"""An idle JupyterLab on a site cluster's compute node, reached through its login node
(``compute_access = "via_login"``): the poller asks its server for its last activity over the
owner's own SSH channel, as the proxy would, then warns and ends it at the site's limit."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from sqlalchemy.ext.asyncio import AsyncSession

from tests.integration.interactive.test_idle_jupyter_on_cluster import (
    Portal,
    idle_jupyterlab_is_warned_then_ended,
    idle_portal,
)
from tests.slurm_versions import clusters_file

pytestmark = pytest.mark.slurm


@pytest.fixture
async def portal(slurm_version: str, db_url: str, session: AsyncSession) -> AsyncIterator[Portal]:
    clusters = clusters_file(slurm_version)
    assert 'compute_access = "via_login"' in clusters.read_text()
    async with idle_portal(slurm_version, clusters, db_url, session) as portal:
        yield portal


async def test_an_idle_jupyterlab_reached_through_the_login_node_is_warned_then_ended(
    portal: Portal,
) -> None:
    await idle_jupyterlab_is_warned_then_ended(portal)
