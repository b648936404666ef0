"""A job on a PBS cluster speaks of its queue, not of a partition."""

from __future__ import annotations

import re
from html import unescape

import httpx
import pytest
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.scheduler.fake import FakeScheduler
from app.scheduler.pbs.adapter import CAPABILITIES
from app.scheduler.registry import SchedulerRegistry
from tests.factories import fake_registry, make_job
from tests.integration.web.conftest import sign_in
from tests.world import World


class PbsLikeScheduler(FakeScheduler):
    """The fake, declaring what the PBS adapter declares."""

    capabilities = CAPABILITIES


@pytest.fixture
def registry() -> SchedulerRegistry:
    return fake_registry(PbsLikeScheduler(accounts={"alice": ["physics"]}))


async def test_a_job_on_a_pbs_cluster_names_its_queue(
    client: httpx.AsyncClient,
    people: World,
    sessionmaker: async_sessionmaker[AsyncSession],
) -> None:
    async with sessionmaker() as session:
        job = await make_job(session, people.alice, people.physics, partition="workq")
        await session.commit()
    await sign_in(client, "alice")
    page = (await client.get(f"/jobs/{job.id}")).text
    status = (await client.get(f"/jobs/{job.id}/status")).text
    for html in (page, status):
        text = unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html)))
        assert "Queue workq" in text
        assert "Partition" not in text
