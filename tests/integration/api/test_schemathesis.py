"""Property-based fuzzing of /api/v1 from its own OpenAPI schema: no input may cause a 5xx.

Runs the ASGI app in-process on a migrated SQLite file with one signed-in member, so both
the unauthenticated paths and the authorized ones are exercised.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
import schemathesis
from fastapi import FastAPI
from hypothesis import HealthCheck, given, settings
from schemathesis.core.result import Ok

from app.config import Settings
from app.db import create_engine, create_sessionmaker, migrate_to_head
from app.main import create_app
from app.scheduler.fake import FakeScheduler
from app.tokens import service as tokens
from app.users.actor import Actor
from tests.factories import add_member, fake_registry, make_project, make_template, make_user

MAX_EXAMPLES = 50
# The operations are fuzzed in shards, so that parallel workers share the work: one test of
# every operation was the longest of the suite (over ten minutes of one worker's CPU).
SHARDS = 4


async def _seed(url: str) -> str:
    engine = create_engine(url)
    try:
        async with create_sessionmaker(engine)() as session:
            alice = await make_user(session, "alice", cluster_username="alice")
            physics = await make_project(session, "physics", slurm_account="physics")
            await add_member(session, alice, physics)
            await make_template(session, alice, name="hello")
            actor = Actor(user_id=alice.id, login="alice", project_roles={physics.id: "member"})
            created = await tokens.create_token(
                session, actor, name="fuzz", scopes=["submit"], lifetime_days=1
            )
            await session.commit()
            return created.secret
    finally:
        await engine.dispose()


@pytest.fixture(scope="module")
def fuzz_app(tmp_path_factory: pytest.TempPathFactory) -> tuple[FastAPI, str]:
    url = f"sqlite+aiosqlite:///{tmp_path_factory.mktemp('fuzz') / 'portal.db'}"
    migrate_to_head(url)
    secret = asyncio.run(_seed(url))
    registry = fake_registry(FakeScheduler(accounts={"alice": ["physics"]}))
    settings = Settings(env="dev", database_url=url, run_poller_in_web=False)
    return create_app(settings, registry=registry), secret


def _operations(app: FastAPI) -> list[Any]:
    loaded = schemathesis.openapi.from_asgi("/api/openapi.json", app)
    return [result.ok() for result in loaded.get_all_operations() if isinstance(result, Ok)]


@pytest.mark.parametrize("shard", range(SHARDS))
def test_api_never_answers_with_a_server_error(fuzz_app: tuple[FastAPI, str], shard: int) -> None:
    app, secret = fuzz_app
    headers = {"Authorization": f"Bearer {secret}"}
    operations = [op for op in _operations(app) if not op.path.endswith("/follow")]
    assert len(operations) >= 15
    for operation in operations[shard::SHARDS]:

        @given(case=operation.as_strategy())
        @settings(max_examples=MAX_EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))
        def check(case: Any) -> None:
            response = case.call(headers=headers)
            assert response.status_code < 500, (
                f"{case.method} {case.formatted_path}: {response.text}"
            )

        check()
