"""``python -m app.manage create-admin``: a new site's first administrator, made on the host."""

from __future__ import annotations

import asyncio
import io

import pytest
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.manage import main
from app.models.audit import AuditEvent
from app.models.users import User
from app.security import is_password_correct
from tests.world import World

pytestmark = pytest.mark.sqlite

PASSWORD = "correct horse battery"


def _run(monkeypatch: pytest.MonkeyPatch, db_url: str, argv: list[str], stdin: str) -> int:
    monkeypatch.setenv("PORTAL_DATABASE_URL", db_url)
    monkeypatch.setenv("PORTAL_ENV", "dev")
    monkeypatch.setattr("sys.stdin", io.StringIO(stdin))
    # main() runs its own event loop, as it does from a shell.
    return asyncio.get_event_loop().run_in_executor(None, main, argv)  # type: ignore[return-value]


async def _user(sessionmaker: async_sessionmaker[AsyncSession], login: str) -> User | None:
    async with sessionmaker() as session:
        return await session.scalar(select(User).where(User.login == login))


async def test_the_first_administrator_is_made_and_signs_in_with_the_password_given(
    monkeypatch: pytest.MonkeyPatch,
    db_url: str,
    sessionmaker: async_sessionmaker[AsyncSession],
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = ["create-admin", "Ops", "--name", "Site operations", "--password-stdin"]
    assert await _run(monkeypatch, db_url, argv, PASSWORD + "\n") == 0
    assert capsys.readouterr().out == "ops: created\n"
    made = await _user(sessionmaker, "ops")
    assert made is not None and made.is_site_admin and made.display_name == "Site operations"
    assert is_password_correct(made.password_hash, PASSWORD)
    async with sessionmaker() as session:
        [event] = await session.scalars(
            select(AuditEvent).where(AuditEvent.target_id == str(made.id))
        )
    assert (event.action, event.actor_user_id) == ("admin.user.create", None)


async def test_an_existing_user_is_promoted_and_keeps_a_password_not_given(
    monkeypatch: pytest.MonkeyPatch,
    db_url: str,
    world: World,
    sessionmaker: async_sessionmaker[AsyncSession],
) -> None:
    before = await _user(sessionmaker, "carol")
    assert before is not None and not before.is_site_admin
    assert await _run(monkeypatch, db_url, ["create-admin", "carol", "--no-password"], "") == 0
    after = await _user(sessionmaker, "carol")
    assert after is not None and after.is_site_admin
    assert after.password_hash == before.password_hash


@pytest.mark.parametrize(
    ("argv", "stdin", "words"),
    [
        (["create-admin", "ops", "--password-stdin"], "short\n", "at least 12 characters"),
        (["create-admin", "9ops", "--no-password"], "", "lower-case letters, digits"),
    ],
)
async def test_a_bad_login_or_password_makes_no_one(
    monkeypatch: pytest.MonkeyPatch,
    db_url: str,
    sessionmaker: async_sessionmaker[AsyncSession],
    capsys: pytest.CaptureFixture[str],
    argv: list[str],
    stdin: str,
    words: str,
) -> None:
    assert await _run(monkeypatch, db_url, argv, stdin) == 2
    assert words in capsys.readouterr().err
    async with sessionmaker() as session:
        assert (await session.scalars(select(User).where(User.is_site_admin))).all() == []
