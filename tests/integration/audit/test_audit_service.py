"""The audit service: appending, filtering and who may read."""

from __future__ import annotations

from datetime import timedelta

import pytest
from sqlalchemy.ext.asyncio import AsyncSession

from app.audit.service import AuditFilter, record, search, to_csv
from app.errors import Forbidden, ValidationFailed
from app.models.base import utc_now
from app.users.actor import Actor
from tests.factories import make_user

# The portability tier: these also run on SQLite (ADR 0018).
pytestmark = pytest.mark.sqlite


async def test_filters_by_actor_action_surface_and_dates(session: AsyncSession) -> None:
    admin = await make_user(session, "root-admin", is_site_admin=True)
    other = await make_user(session, "someone")
    await record(session, admin.id, "web", "admin.user.create", "user", 5, "10.0.0.1")
    await record(session, other.id, "api", "job.submit", "job", 7, "10.0.0.2", {"n": 1})
    actor = Actor(admin.id, admin.login, is_site_admin=True)
    today = utc_now().date()

    by_actor = await search(session, actor, AuditFilter(actor_login="someone"))
    by_surface = await search(session, actor, AuditFilter(surface="web"))
    in_range = await search(session, actor, AuditFilter(since=today, until=today))
    before = await search(session, actor, AuditFilter(until=today - timedelta(days=1)))

    assert [r.action for r in by_actor] == ["job.submit"]
    assert [r.action for r in by_surface] == ["admin.user.create"]
    assert len(in_range) == 2 and before == []
    assert "job.submit" in to_csv(by_actor) and "n=1" in to_csv(by_actor)


async def test_non_admin_cannot_read_and_bad_filters_are_refused(session: AsyncSession) -> None:
    user = await make_user(session, "plain")
    with pytest.raises(Forbidden):
        await search(session, Actor(user.id, user.login), AuditFilter())
    admin = Actor(user.id, user.login, is_site_admin=True)
    with pytest.raises(ValidationFailed):
        await search(session, admin, AuditFilter(surface="telepathy"))


async def test_unknown_surface_is_not_recorded(session: AsyncSession) -> None:
    with pytest.raises(ValueError, match="surface"):
        await record(session, None, "fax", "x")
