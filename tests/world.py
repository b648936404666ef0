"""The one seeded world every test shares: the demo's people, projects and roles (``app.seed``).

alice manages physics and carol is a member of it; bob manages chemistry and dave is a member
of it; admin is a site administrator with no cluster account. Everyone's password is
``secret-pass`` and their cluster username is their login.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.models.projects import Project
from app.models.users import User
from app.security import hash_password
from app.seed import DEMO_USERS
from tests.factories import add_member, make_project, make_user

PASSWORD = "secret-pass"


@dataclass
class World:
    alice: User
    carol: User
    bob: User
    dave: User
    admin: User
    physics: Project
    chemistry: Project


@cache
def password_hash() -> str:
    """One Argon2 hash of ``PASSWORD`` for every world: each costs about 0.1 s of CPU, and
    hundreds of tests seed a world."""
    return hash_password(PASSWORD)


async def seed_world(sessionmaker: async_sessionmaker[AsyncSession]) -> World:
    async with sessionmaker() as session:
        password = password_hash()
        projects = {
            name: await make_project(session, name, slurm_account=name)
            for name in ("physics", "chemistry")
        }
        users: dict[str, User] = {}
        for login, (_, account, role) in DEMO_USERS.items():
            users[login] = await make_user(
                session,
                login,
                cluster_username=login if account else None,
                password_hash=password,
                is_site_admin=account is None,
            )
            if account and role:
                await add_member(session, users[login], projects[account], role=role)
        await session.commit()
        return World(**users, **projects)
