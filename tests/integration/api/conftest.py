"""An app wired to the test database and an in-memory scheduler, token helpers, and an app
on the real development cluster for tests marked ``slurm``."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import httpx
import pytest
from sqlalchemy.ext.asyncio import AsyncSession

from app.config import Settings
from app.main import create_app
from app.models.users import User
from app.scheduler.fake import FakeScheduler
from app.scheduler.registry import SchedulerRegistry
from app.tokens import service as tokens
from app.users.actor import Actor
from tests.factories import fake_registry


@pytest.fixture
def scheduler() -> FakeScheduler:
    return FakeScheduler(
        accounts={"alice": ["physics"], "carol": ["physics"], "bob": ["chemistry"]}
    )


@pytest.fixture
def registry(scheduler: FakeScheduler) -> SchedulerRegistry:
    return fake_registry(scheduler)


async def issue_token(
    session: AsyncSession, user: User, scopes: tuple[str, ...] = ("submit",), days: int = 7
) -> dict[str, str]:
    """Authorization headers carrying a fresh token of ``user``."""
    actor = Actor(user_id=user.id, login=user.login, is_site_admin=user.is_site_admin)
    created = await tokens.create_token(
        session, actor, name="test", scopes=scopes, lifetime_days=days
    )
    await session.commit()
    return {"Authorization": f"Bearer {created.secret}"}


CLUSTERS_FILE = Path(os.environ.get("PORTAL_CLUSTERS_FILE", "/var/lib/hpcportal-dev/clusters.toml"))


def clusters_file() -> Path:
    if not CLUSTERS_FILE.exists():
        pytest.skip(f"{CLUSTERS_FILE} missing: run scripts/dev-cluster up (scripts/test does)")
    return CLUSTERS_FILE


@asynccontextmanager
async def serving(settings: Settings) -> AsyncIterator[httpx.AsyncClient]:
    """A client of an app built from ``settings``, lifespan (and so the poller) running."""
    application = create_app(settings)
    async with application.router.lifespan_context(application):
        transport = httpx.ASGITransport(app=application)
        async with httpx.AsyncClient(transport=transport, base_url="http://portal.test") as http:
            yield http


@pytest.fixture
async def cluster_client(db_url: str) -> AsyncIterator[httpx.AsyncClient]:
    """The API on the real development cluster, with the poller running every second."""
    settings = Settings(
        env="dev",
        database_url=db_url,
        clusters_file=clusters_file(),
        run_poller_in_web=True,
        poll_interval=1,
    )
    async with serving(settings) as http:
        yield http
