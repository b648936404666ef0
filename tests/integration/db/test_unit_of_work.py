"""unit_of_work commits once on success and leaves nothing behind on error."""

from __future__ import annotations

import pytest
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.db import unit_of_work
from app.models.users import User
from tests.factories import make_user

# The portability tier: these also run on SQLite (ADR 0018).
pytestmark = pytest.mark.sqlite


async def count_users(sessionmaker: async_sessionmaker[AsyncSession]) -> int:
    async with sessionmaker() as session:
        return (await session.scalar(select(func.count()).select_from(User))) or 0


async def test_unit_of_work_commits_when_the_block_succeeds(
    sessionmaker: async_sessionmaker[AsyncSession],
) -> None:
    async with unit_of_work(sessionmaker) as session:
        await make_user(session, "alice")

    assert await count_users(sessionmaker) == 1


async def test_unit_of_work_rolls_back_when_the_block_raises(
    sessionmaker: async_sessionmaker[AsyncSession],
) -> None:
    with pytest.raises(RuntimeError, match="cluster unreachable"):
        async with unit_of_work(sessionmaker) as session:
            await make_user(session, "alice")
            raise RuntimeError("cluster unreachable")

    assert await count_users(sessionmaker) == 0


async def test_committed_rows_do_not_leak_into_the_next_test(
    sessionmaker: async_sessionmaker[AsyncSession],
) -> None:
    assert await count_users(sessionmaker) == 0
