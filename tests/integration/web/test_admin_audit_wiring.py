"""Actions of other parts of the portal that write to the audit trail."""

from __future__ import annotations

import httpx
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.models.audit import AuditEvent
from tests.integration.web.conftest import sign_in
from tests.world import World


async def test_sign_in_through_the_form_is_audited_with_surface_and_address(
    client: httpx.AsyncClient, people: World, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    await sign_in(client, "carol")
    async with sessionmaker() as session:
        events = (await session.execute(select(AuditEvent))).scalars().all()
    assert [(e.action, e.surface, e.actor_user_id, e.target_id) for e in events] == [
        ("auth.sign_in", "web", people.carol.id, str(people.carol.id))
    ]
    assert events[0].address
