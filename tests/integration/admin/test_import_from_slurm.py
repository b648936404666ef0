"""Comparing Slurm associations with the portal, and applying only what was confirmed."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from app.admin import importer
from app.admin.associations import SlurmAssociation, SlurmState, parse_associations
from app.audit.service import Origin
from app.models.audit import AuditEvent
from app.models.projects import Membership, Project
from app.users.actor import Actor
from tests.factories import add_member, make_project, make_user

STATE = SlurmState(
    associations=[
        SlurmAssociation("physics", ""),
        SlurmAssociation("physics", "alice", {"cpu": 6000}),
        SlurmAssociation("physics", "carol"),
        SlurmAssociation("physics", "erin"),
        SlurmAssociation("chemistry", "bob"),
    ],
    coordinators={"physics": {"alice"}},
)


def test_parsing_keeps_the_cluster_and_reads_tres_minutes() -> None:
    text = "testcluster|physics|alice||cpu=6000,gres/gpu=60\nother|physics|bob||\n"
    assert parse_associations(text, "testcluster") == [
        SlurmAssociation("physics", "alice", {"cpu": 6000, "gres/gpu": 60})
    ]


async def test_differences_are_reported_and_only_confirmed_ones_applied(
    session: AsyncSession,
) -> None:
    admin = await make_user(session, "boss", is_site_admin=True)
    alice = await make_user(session, "alice", cluster_username="alice")
    await make_user(session, "carol", cluster_username="carol")
    dave = await make_user(session, "dave", cluster_username="dave")
    physics = await make_project(session, "Physics", slurm_account="physics")
    await make_project(session, "Biology", slurm_account="biology")
    await add_member(session, alice, physics, role="member")
    await add_member(session, dave, physics)
    actor = Actor(admin.id, admin.login, is_site_admin=True)

    found = await importer.preview(session, actor, "testcluster", STATE)

    assert {d.key for d in found} == {
        "project_missing:chemistry:",
        "project_not_in_slurm:biology:",
        "role_differs:physics:alice",
        "member_missing:physics:carol",
        "unknown_user:physics:erin",
        "member_not_in_slurm:physics:dave",
    }
    origin = Origin("web", "192.0.2.1")
    confirmed = ["role_differs:physics:alice", "project_missing:chemistry:"]
    applied = await importer.apply(session, actor, origin, "testcluster", STATE, confirmed)

    assert sorted(d.key for d in applied) == sorted(confirmed)
    roles = dict(
        (
            await session.execute(
                select(Membership.user_id, Membership.role).where(
                    Membership.project_id == physics.id
                )
            )
        ).all()
    )
    assert roles == {alice.id: "manager", dave.id: "member"}
    accounts = set((await session.execute(select(Project.slurm_account))).scalars())
    assert accounts == {"physics", "biology", "chemistry"}
    actions = set((await session.execute(select(AuditEvent.action))).scalars())
    assert actions == {"admin.membership.set", "admin.project.create"}
