"""Per-user limits hold under concurrency: counted and written in one serialised step.

Sixty requests at once against a limit of fifty, each in its own transaction on its own
connection, through the API as a script would send them, on SQLite and PostgreSQL.
"""

from __future__ import annotations

import asyncio

import httpx
import pytest
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.config import Settings
from app.models.notifications import NotificationRule
from app.notifications.service import MAX_RULES
from tests.factories import make_job
from tests.integration.api.conftest import issue_token
from tests.world import World

# The lock differs by backend (FOR UPDATE, SQLite's write lock): both are proven.
pytestmark = pytest.mark.sqlite

RULES = "/api/v1/notifications/rules"
AT_ONCE = 60


@pytest.fixture
def settings(db_url: str) -> Settings:
    return Settings(env="dev", database_url=db_url, run_poller_in_web=False, smtp_host="mail")


async def _rules(sessionmaker: async_sessionmaker[AsyncSession], user_id: int) -> int:
    async with sessionmaker() as session:
        query = select(func.count()).where(NotificationRule.user_id == user_id)
        return (await session.scalar(query)) or 0


async def test_sixty_rules_made_at_once_stop_at_the_limit(
    client: httpx.AsyncClient,
    session: AsyncSession,
    sessionmaker: async_sessionmaker[AsyncSession],
    world: World,
) -> None:
    jobs = [await make_job(session, world.alice, world.physics) for _ in range(AT_ONCE)]
    headers = await issue_token(session, world.alice)
    bodies = [{"event": "ended", "channel": "email", "job_id": job.id} for job in jobs]
    answers = await asyncio.gather(*(client.post(RULES, json=b, headers=headers) for b in bodies))
    statuses = sorted(answer.status_code for answer in answers)
    assert statuses == [201] * MAX_RULES + [422] * (AT_ONCE - MAX_RULES), statuses
    assert await _rules(sessionmaker, world.alice.id) == MAX_RULES
    refused = next(answer for answer in answers if answer.status_code == 422)
    assert "the most one account may have" in refused.json()["detail"]


async def test_the_same_rule_sent_twenty_times_at_once_is_made_once(
    client: httpx.AsyncClient,
    session: AsyncSession,
    sessionmaker: async_sessionmaker[AsyncSession],
    world: World,
) -> None:
    headers = await issue_token(session, world.alice)
    body = {"event": "failed", "channel": "email"}
    answers = await asyncio.gather(
        *(client.post(RULES, json=body, headers=headers) for _ in range(20))
    )
    assert sorted(answer.status_code for answer in answers) == [201] + [422] * 19
    assert await _rules(sessionmaker, world.alice.id) == 1
