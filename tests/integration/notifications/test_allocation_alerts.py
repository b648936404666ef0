"""A project nearing its allocation: the poller reads the limit, the managers are told once at
80 % and once at 95 %, by e-mail and by signed webhook (in-memory scheduler, real receivers)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import timedelta

import pytest
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.config import Settings
from app.models.base import utc_now
from app.models.usage import UsageDaily
from app.notifications.delivery import webhook_client
from app.notifications.dispatcher import dispatch_once
from app.poller.cycle import CycleWork, poll_cluster_once
from app.reports.allocation import burndown
from app.scheduler.fake import FakeScheduler
from app.scheduler.types import TresMinutesLimit
from tests.factories import DEFAULT_CLUSTER
from tests.integration.notifications.conftest import add_rule, outbox_rows
from tests.notify_servers import Mailbox, Receiver, smtp_server, webhook_receiver
from tests.world import World

USAGE = CycleWork(usage=True)


@pytest.fixture
def mail() -> Iterator[tuple[Mailbox, int]]:
    with smtp_server() as server:
        yield server


@pytest.fixture
def hooks() -> Iterator[tuple[Receiver, str]]:
    with webhook_receiver() as receiver:
        yield receiver


async def _used(
    sessionmaker: async_sessionmaker[AsyncSession], minutes: int, days_ago: int
) -> None:
    async with sessionmaker() as session:
        session.add(
            UsageDaily(
                cluster=DEFAULT_CLUSTER,
                account="physics",
                user_name="carol",
                partition="debug",
                day=utc_now().date() - timedelta(days=days_ago),
                cpu_seconds=minutes * 60,
            )
        )
        await session.commit()


async def test_managers_are_told_once_at_80_and_once_at_95_per_cent(
    db_url: str,
    sessionmaker: async_sessionmaker[AsyncSession],
    world: World,
    mail: tuple[Mailbox, int],
    hooks: tuple[Receiver, str],
) -> None:
    (mailbox, port), (receiver, url) = mail, hooks
    fake = FakeScheduler()
    fake.limits = [TresMinutesLimit("physics", "", {"cpu": 1000})]
    await add_rule(sessionmaker, world.alice, "allocation")  # alice manages physics
    await add_rule(sessionmaker, world.alice, "allocation", webhook_url=url)
    await add_rule(sessionmaker, world.carol, "allocation")  # a member: not told
    await _used(sessionmaker, 700, days_ago=3)
    await poll_cluster_once(sessionmaker, DEFAULT_CLUSTER, fake, work=USAGE)
    assert await outbox_rows(sessionmaker) == []
    await _used(sessionmaker, 110, days_ago=1)  # 81 %
    await poll_cluster_once(sessionmaker, DEFAULT_CLUSTER, fake, work=USAGE)
    await poll_cluster_once(sessionmaker, DEFAULT_CLUSTER, fake, work=USAGE)
    rows = await outbox_rows(sessionmaker)
    assert [(r.user_id, r.threshold, r.project_id) for r in rows] == [
        (world.alice.id, 80, world.physics.id)
    ] * 2
    settings = Settings(
        database_url=db_url,
        smtp_host="127.0.0.1",
        smtp_port=port,
        smtp_security="none",
        smtp_from="portal@example.org",
        webhook_allow_private=True,
    )
    async with webhook_client() as client:
        assert await dispatch_once(settings, sessionmaker, client) == 2
    [(recipients, message)] = mailbox.messages
    assert recipients == ["alice@example.org"]
    assert message["Subject"] == "Project physics has used 80 % of its allocation"
    body = message.get_payload(decode=True)
    assert isinstance(body, bytes)
    assert body.decode().startswith(
        "Project “physics” (account physics on testcluster) has used 80 % of its allocation "
        "of CPU minutes."
    )
    payload = json.loads(receiver.requests[0].body)
    assert payload["event"] == "allocation" and payload["project"]["threshold"] == 80
    await _used(sessionmaker, 150, days_ago=0)  # 96 %
    await poll_cluster_once(sessionmaker, DEFAULT_CLUSTER, fake, work=USAGE)
    assert [r.threshold for r in await outbox_rows(sessionmaker)] == [80, 80, 95, 95]


async def test_burndown_projects_the_day_the_allocation_runs_out(
    session: AsyncSession, sessionmaker: async_sessionmaker[AsyncSession], world: World
) -> None:
    fake = FakeScheduler()
    fake.limits = [TresMinutesLimit("physics", "", {"cpu": 10_000})]
    await _used(sessionmaker, 2_000, days_ago=20)
    await _used(sessionmaker, 700, days_ago=2)  # 700 in the last 7 days: 100 a day
    await poll_cluster_once(sessionmaker, DEFAULT_CLUSTER, fake, work=USAGE)
    found = await burndown(session, world.physics, utc_now().date())
    assert (found.limit_minutes, found.source, found.used_minutes) == (10_000, "scheduler", 2_700)
    assert found.per_day == 100
    assert found.runs_out_on == utc_now().date() + timedelta(days=73)
    assert found.days[-1][1] == 2_700 and found.days[0][1] == 0
