"""The nodes view on the in-memory scheduler: the poller stores one report per read; the
API and the page show each user the nodes of the partitions open to their projects, and
never ask the scheduler themselves."""

from __future__ import annotations

import httpx
import pytest
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.models.users import User
from app.poller.cycle import CycleWork, poll_cluster_once
from app.scheduler.fake import FakeScheduler
from app.scheduler.nodes import NodeInfo, NodesReport, NodeState, PartitionAccess
from app.scheduler.registry import SchedulerRegistry
from tests.factories import DEFAULT_CLUSTER, fake_registry
from tests.integration.api.conftest import issue_token
from tests.integration.web.conftest import sign_in
from tests.world import World

FRENCH = {"Accept-Language": "fr-CA,fr;q=0.9"}
REPORT = NodesReport(
    nodes=(
        NodeInfo("cpu01", NodeState.MIXED, "MIXED", ("debug",), 32, 8, 192_000, 64_000),
        NodeInfo("cpu02", NodeState.ALLOCATED, "ALLOCATED", ("debug",), 32, 32, 192_000, 0),
        NodeInfo(
            "gpu01",
            NodeState.IDLE,
            "IDLE",
            ("gpu",),
            64,
            0,
            512_000,
            0,
            gpus_total=4,
            gpus_allocated=1,
            features=("a100", "nvlink"),
        ),
        NodeInfo(
            "chem01",
            NodeState.DRAINED,
            "IDLE+DRAIN",
            ("chem",),
            16,
            0,
            64_000,
            0,
            reason="DIMM B2 failed",
        ),
    ),
    partitions=(
        PartitionAccess("debug"),
        PartitionAccess("gpu", allow_accounts=("physics",)),
        PartitionAccess("chem", deny_accounts=("physics",)),
    ),
)


@pytest.fixture
def scheduler() -> FakeScheduler:
    fake = FakeScheduler()
    fake.nodes_report = REPORT
    return fake


@pytest.fixture
def registry(scheduler: FakeScheduler) -> SchedulerRegistry:
    return fake_registry(scheduler)


@pytest.fixture
async def polled(
    sessionmaker: async_sessionmaker[AsyncSession], scheduler: FakeScheduler, world: World
) -> FakeScheduler:
    result = await poll_cluster_once(
        sessionmaker, DEFAULT_CLUSTER, scheduler, work=CycleWork(nodes=True)
    )
    assert (result.calls, scheduler.calls) == (2, ["queue", "nodes"])
    scheduler.calls.clear()
    return scheduler


async def _nodes(
    client: httpx.AsyncClient,
    session: AsyncSession,
    user: User,
    query: str = "",
    scopes: tuple[str, ...] = ("read",),
) -> httpx.Response:
    headers = await issue_token(session, user, scopes)
    return await client.get(f"/api/v1/clusters/{DEFAULT_CLUSTER}/nodes{query}", headers=headers)


async def test_each_user_sees_the_nodes_of_the_partitions_open_to_their_projects(
    client: httpx.AsyncClient, session: AsyncSession, world: World, polled: FakeScheduler
) -> None:
    alice = (await _nodes(client, session, world.alice)).json()
    assert alice["partitions"] == ["debug", "gpu"] and alice["read_at"] is not None
    assert [n["name"] for n in alice["nodes"]] == ["cpu01", "cpu02", "gpu01"]
    gpu = alice["nodes"][2]
    assert gpu["gpus"] == {"total": 4, "allocated": 1, "idle": 3}
    assert gpu["features"] == ["a100", "nvlink"] and gpu["takes_jobs"] is True
    bob = (await _nodes(client, session, world.bob)).json()
    assert bob["partitions"] == ["debug", "chem"]
    chem = bob["nodes"][-1]
    assert (chem["name"], chem["state"], chem["native_state"]) == (
        "chem01",
        "drained",
        "IDLE+DRAIN",
    )
    assert chem["reason"] == "DIMM B2 failed" and chem["takes_jobs"] is False
    admin = (await _nodes(client, session, world.admin, scopes=("read", "admin"))).json()
    assert len(admin["nodes"]) == 4
    assert polled.calls == [], "the view reads the stored report, not the scheduler"


async def test_filters_narrow_to_a_partition_and_to_nodes_that_can_start_a_job(
    client: httpx.AsyncClient, session: AsyncSession, world: World, polled: FakeScheduler
) -> None:
    debug = (await _nodes(client, session, world.alice, "?partition=debug")).json()
    assert [n["name"] for n in debug["nodes"]] == ["cpu01", "cpu02"]
    free = (await _nodes(client, session, world.alice, "?available=true")).json()
    assert [n["name"] for n in free["nodes"]] == ["cpu01", "gpu01"]
    assert free["nodes"][0]["cpus"] == {"total": 32, "allocated": 8, "idle": 24}
    closed = await _nodes(client, session, world.alice, "?partition=chem")
    assert closed.status_code == 404
    unknown = await client.get(
        "/api/v1/clusters/elsewhere/nodes", headers=await issue_token(session, world.alice)
    )
    assert unknown.status_code == 404


async def test_before_the_first_read_the_view_says_so(
    client: httpx.AsyncClient, session: AsyncSession, world: World, scheduler: FakeScheduler
) -> None:
    body = (await _nodes(client, session, world.alice)).json()
    assert (body["read_at"], body["nodes"]) == (None, [])
    await sign_in(client, "alice")
    page = await client.get(f"/clusters/{DEFAULT_CLUSTER}/nodes")
    assert "have not been read from this cluster yet" in page.text
    assert scheduler.calls == []


async def test_the_page_shows_idle_resources_states_and_reasons_in_english_and_french(
    client: httpx.AsyncClient, world: World, polled: FakeScheduler
) -> None:
    await sign_in(client, "bob")
    page = await client.get(f"/clusters/{DEFAULT_CLUSTER}/nodes")
    assert page.status_code == 200
    assert "Nodes that can start a job now: 1 of 3, with 24 CPUs and 0 GPUs idle." in page.text
    assert "24 of 32" in page.text and "125.0 of 187.5 GiB" in page.text
    assert "drained" in page.text and "Reason: DIMM B2 failed" in page.text
    assert "gpu01" not in page.text
    dashboard = await client.get("/dashboard")
    assert f'href="/clusters/{DEFAULT_CLUSTER}/nodes"' in dashboard.text
    french = await client.get(f"/clusters/{DEFAULT_CLUSTER}/nodes?available=true", headers=FRENCH)
    assert "Nœuds sur" in french.text
    assert "Nœuds pouvant lancer un travail maintenant\u00a0: 1 sur 1" in french.text
    assert polled.calls == []
