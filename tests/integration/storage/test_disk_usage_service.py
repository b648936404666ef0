"""The disk usage service over the in-memory scheduler: whose figures, kept how long, and
what a user is told when there are none."""

from __future__ import annotations

from unittest.mock import AsyncMock

import pytest

from app.errors import NotFound, ServiceUnavailable
from app.scheduler.disk_usage import FilesystemUsage, QuotaFigures
from app.scheduler.errors import SchedulerTimeout
from app.scheduler.fake import FakeScheduler
from app.scheduler.registry import SchedulerRegistry
from app.storage.service import (
    ClusterDiskUsage,
    DiskUsageNotReported,
    DiskUsageProblem,
    DiskUsageService,
)
from app.users.actor import Actor
from tests.factories import fake_registry

GiB = 1024**3
ALICE = Actor(user_id=1, login="alice", cluster_usernames={"testcluster": "alice"})
BOB = Actor(user_id=2, login="bob", cluster_usernames={"testcluster": "bob"})
ADMIN = Actor(user_id=3, login="admin", is_site_admin=True)


def home(user: str, used_gib: int) -> FilesystemUsage:
    return FilesystemUsage(
        f"/home (user {user})",
        QuotaFigures(used_gib * GiB, hard=50 * GiB),
        QuotaFigures(1200, hard=500_000),
        f"/home (user {user})  {used_gib}GiB/50GiB  1200/500k",
    )


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def fake() -> FakeScheduler:
    return FakeScheduler(disk_usages={"alice": [home("alice", 41)], "bob": [home("bob", 2)]})


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def service(fake: FakeScheduler, clock: Clock) -> DiskUsageService:
    return DiskUsageService(fake_registry(fake), clock=clock)


async def test_each_user_gets_their_own_figures(service: DiskUsageService) -> None:
    alices = await service.disk_usage(ALICE, "testcluster")
    bobs = await service.disk_usage(BOB, "testcluster")

    assert (alices.username, [fs.label for fs in alices.filesystems]) == (
        "alice",
        ["/home (user alice)"],
    )
    assert bobs.filesystems[0].space.used == 2 * GiB


async def test_figures_are_kept_a_minute_per_user(
    service: DiskUsageService, fake: FakeScheduler, clock: Clock
) -> None:
    first = await service.disk_usage(ALICE, "testcluster")
    clock.now += 59
    assert await service.disk_usage(ALICE, "testcluster") is first
    await service.disk_usage(BOB, "testcluster")
    assert fake.calls.count("disk_usage") == 2

    clock.now += 2
    await service.disk_usage(ALICE, "testcluster")
    assert fake.calls.count("disk_usage") == 3


async def test_a_failing_command_is_told_in_its_own_words_and_asked_again_soon(
    service: DiskUsageService, fake: FakeScheduler, clock: Clock
) -> None:
    fake.disk_usage_failure = "quota: Cannot stat() mounted device /dev/sdb1"

    with pytest.raises(ServiceUnavailable) as raised:
        await service.disk_usage(ALICE, "testcluster")
    assert raised.value.detail == (
        "Disk usage is not available: quota: Cannot stat() mounted device /dev/sdb1"
    )
    fake.disk_usage_failure = None
    clock.now += 10
    with pytest.raises(ServiceUnavailable):
        await service.disk_usage(ALICE, "testcluster")
    clock.now += 10
    assert (await service.disk_usage(ALICE, "testcluster")).filesystems


async def test_an_unreachable_cluster_or_a_slow_command_is_a_message(
    service: DiskUsageService, fake: FakeScheduler, clock: Clock
) -> None:
    fake.is_up = False
    with pytest.raises(ServiceUnavailable, match="the cluster did not answer; try again shortly"):
        await service.disk_usage(ALICE, "testcluster")

    fake.disk_usage = AsyncMock(side_effect=SchedulerTimeout("env did not finish in time"))
    with pytest.raises(ServiceUnavailable, match="the command did not finish in time"):
        await service.disk_usage(BOB, "testcluster")


@pytest.mark.parametrize(
    ("actor", "cluster", "message"),
    [
        (ADMIN, "testcluster", "You have no account on cluster testcluster."),
        (ALICE, "elsewhere", "No cluster named elsewhere."),
    ],
)
async def test_no_account_or_no_cluster_is_not_found(
    service: DiskUsageService, actor: Actor, cluster: str, message: str
) -> None:
    with pytest.raises(NotFound) as raised:
        await service.disk_usage(actor, cluster)
    assert raised.value.detail == message


async def test_a_cluster_without_a_command_does_not_report_disk_usage() -> None:
    service = DiskUsageService(fake_registry(FakeScheduler()))
    with pytest.raises(DiskUsageNotReported, match="Cluster testcluster does not report"):
        await service.disk_usage(ALICE, "testcluster")
    assert await service.overview(ALICE, ["testcluster"]) == []


async def test_overview_has_figures_or_a_problem_per_cluster_of_the_user() -> None:
    working = FakeScheduler(disk_usages={"alice": [home("alice", 1)]})
    failing = FakeScheduler(disk_usages={})
    failing.disk_usage_failure = "diskusage_report: command not found"
    registry = SchedulerRegistry.of({"one": working, "two": failing, "three": FakeScheduler()})
    alice = Actor(user_id=1, login="alice", cluster_usernames={"one": "alice", "two": "alice"})

    found = await DiskUsageService(registry).overview(alice, ["one", "three", "two"])

    assert [type(item) for item in found] == [ClusterDiskUsage, DiskUsageProblem]
    assert found[1] == DiskUsageProblem(
        "two", "Disk usage is not available: diskusage_report: command not found"
    )
