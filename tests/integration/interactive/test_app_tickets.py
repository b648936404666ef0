"""A launch ticket opens its session once for the whole site, not once per web process.

With ``uvicorn --workers N`` (or several replicas) each exchange may land in another process;
two portal applications on one database stand for two of them here, over real sockets.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from datetime import timedelta

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.config import Settings
from app.interactive import tickets
from app.main import create_app
from app.models.base import utc_now
from app.models.web_sessions import SpentAppTicket
from app.scheduler.fake import FakeScheduler
from app.scheduler.registry import SchedulerRegistry
from app.web.settings import WebSettings
from tests.factories import fake_registry
from tests.integration.interactive.app_host_client import AppHost
from tests.integration.interactive.test_app_proxy_routes import (
    Portal,
    _running_session,
    fake_jupyter,
    prefix,
)
from tests.integration.interactive.test_proxy import serve
from tests.integration.web.conftest import sign_in
from tests.world import World

pytestmark = pytest.mark.sqlite
HOUR = timedelta(hours=1)


@pytest.fixture
def registry() -> SchedulerRegistry:
    return fake_registry(FakeScheduler())


@pytest.fixture
async def other_process(
    settings: Settings, registry: SchedulerRegistry, web_settings: WebSettings
) -> AsyncIterator[FastAPI]:
    """A second portal application on the same database, as another worker would be."""
    application = create_app(settings, registry=registry, web_settings=web_settings)
    async with application.router.lifespan_context(application):
        yield application


@pytest.fixture
async def portals(
    app: FastAPI, other_process: FastAPI, session: AsyncSession, world: World
) -> AsyncIterator[tuple[Portal, Portal]]:
    async with (
        serve(fake_jupyter()) as jupyter_port,
        serve(app) as first_port,
        serve(other_process) as second_port,
    ):
        alices = await _running_session(session, world, world.alice, jupyter_port)
        carols = await _running_session(session, world, world.carol, jupyter_port)
        await session.commit()
        yield Portal(first_port, alices, carols), Portal(second_port, alices, carols)


def _host(portal: Portal, client: httpx.AsyncClient) -> AppHost:
    name = f"s-{uuid.UUID(portal.alices.uuid).hex}.apps.localhost:{portal.port}"
    return AppHost(portal.url, name, client)


async def test_a_ticket_spent_in_one_process_is_refused_by_another(
    portals: tuple[Portal, Portal],
) -> None:
    first, second = portals
    async with httpx.AsyncClient(base_url=first.url, trust_env=False, timeout=30) as alice:
        await sign_in(alice, "alice")
        sent = await alice.get(f"{prefix(first.alices)}lab/tree")
        ticket_url = sent.headers["location"]
        redeemed = await _host(first, alice).redeem(ticket_url)
        replayed = await _host(second, alice).redeem(ticket_url)
        replayed_here = await _host(first, alice).redeem(ticket_url)

    assert redeemed.status_code == 303, redeemed.text
    assert replayed.status_code == 403, "the other process took a ticket already spent"
    assert "set-cookie" not in replayed.headers
    assert replayed_here.status_code == 403


async def test_racing_exchanges_of_one_ticket_spend_it_once(
    sessionmaker: async_sessionmaker[AsyncSession],
) -> None:
    now = utc_now()
    spent = await asyncio.gather(
        *(tickets.spend(sessionmaker, "racing-nonce", now, HOUR) for _ in range(8))
    )
    assert sorted(spent) == [False] * 7 + [True]


async def test_spent_tickets_are_forgotten_once_they_would_have_expired(
    sessionmaker: async_sessionmaker[AsyncSession],
) -> None:
    start = utc_now()
    assert await tickets.spend(sessionmaker, "old", start, timedelta(minutes=2))
    assert await tickets.spend(sessionmaker, "new", start + timedelta(minutes=3), HOUR)
    async with sessionmaker() as session:
        kept = await session.scalars(select(SpentAppTicket.nonce))
        assert set(kept) == {"new"}
        count = await session.scalar(select(func.count()).select_from(SpentAppTicket))
    assert count == 1
    assert not await tickets.spend(sessionmaker, "new", start + timedelta(minutes=4), HOUR)
