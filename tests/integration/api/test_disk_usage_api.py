"""GET /api/v1/clusters/{cluster}/disk-usage: a user's own figures, and clear refusals."""

from __future__ import annotations

import httpx
import pytest
from sqlalchemy.ext.asyncio import AsyncSession

from app.scheduler.disk_usage import FilesystemUsage, QuotaFigures
from app.scheduler.fake import FakeScheduler
from tests.integration.api.conftest import issue_token
from tests.world import World

GiB = 1024**3
URL = "/api/v1/clusters/testcluster/disk-usage"


def home(user: str, used: int, files: int) -> FilesystemUsage:
    return FilesystemUsage(
        f"/home (user {user})",
        QuotaFigures(used, hard=50 * GiB),
        QuotaFigures(files, soft=400_000, hard=500_000),
        f"/home (user {user})  {used}/50GiB  {files}/500k",
    )


@pytest.fixture
def scheduler() -> FakeScheduler:
    return FakeScheduler(
        disk_usages={"alice": [home("alice", 48 * GiB, 12)], "bob": [home("bob", GiB, 330_000)]}
    )


async def test_each_user_reads_only_their_own_disk_usage(
    client: httpx.AsyncClient, session: AsyncSession, world: World
) -> None:
    alice = await issue_token(session, world.alice, ("read",))
    bob = await issue_token(session, world.bob, ("read",))

    mine = (await client.get(URL, headers=alice)).json()
    bobs = (await client.get(URL, headers=bob)).json()

    assert (mine["cluster"], mine["username"]) == ("testcluster", "alice")
    [fs] = mine["filesystems"]
    assert fs["filesystem"] == "/home (user alice)" and fs["is_over"] is False
    assert fs["space"] == {
        "used": 48 * GiB,
        "soft_limit": None,
        "hard_limit": 50 * GiB,
        "limit": 50 * GiB,
        "percent": 96.0,
        "level": "critical",
        "is_over": False,
        "grace": None,
    }
    assert fs["files"]["limit"] == 400_000 and fs["files"]["level"] == "ok"
    assert bobs["username"] == "bob"
    assert bobs["filesystems"][0]["files"]["level"] == "warning"


async def test_someone_without_an_account_there_is_told_so(
    client: httpx.AsyncClient, session: AsyncSession, world: World
) -> None:
    headers = await issue_token(session, world.admin, ("read", "admin"))

    response = await client.get(URL, headers=headers)

    assert response.status_code == 404
    assert response.json()["detail"] == "You have no account on cluster testcluster."


@pytest.mark.parametrize(
    ("url", "status", "detail"),
    [
        ("/api/v1/clusters/elsewhere/disk-usage", 404, "No cluster named elsewhere."),
        (URL, 503, "Disk usage is not available: quota: Cannot stat() mounted device /dev/sdb1"),
    ],
)
async def test_an_unknown_cluster_or_a_failing_command_is_a_clear_error(
    client: httpx.AsyncClient,
    session: AsyncSession,
    world: World,
    scheduler: FakeScheduler,
    url: str,
    status: int,
    detail: str,
) -> None:
    scheduler.disk_usage_failure = "quota: Cannot stat() mounted device /dev/sdb1"
    headers = await issue_token(session, world.carol, ("read",))

    response = await client.get(url, headers=headers)

    assert response.status_code == status
    assert response.json() == {"error": response.json()["error"], "detail": detail}


async def test_a_cluster_without_a_command_does_not_report_disk_usage(
    client: httpx.AsyncClient, session: AsyncSession, world: World, scheduler: FakeScheduler
) -> None:
    scheduler.disk_usages = None
    headers = await issue_token(session, world.carol, ("read",))

    response = await client.get(URL, headers=headers)

    assert response.status_code == 404
    assert response.json() == {
        "error": "DiskUsageNotReported",
        "detail": "Cluster testcluster does not report disk usage.",
    }
