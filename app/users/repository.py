"""Queries about users, their cluster accounts and their project roles."""

from __future__ import annotations

from sqlalchemy import String, cast, literal, select, union_all
from sqlalchemy.ext.asyncio import AsyncSession

from app.models import Membership, User, UserClusterAccount


async def get_by_id(session: AsyncSession, user_id: int) -> User | None:
    return await session.get(User, user_id)


async def get_by_login(session: AsyncSession, login: str) -> User | None:
    result = await session.execute(select(User).where(User.login == login))
    return result.scalar_one_or_none()


async def roles_and_usernames(
    session: AsyncSession, user_id: int
) -> tuple[dict[int, str], dict[str, str]]:
    """(role per project id, username per cluster) in one round trip.

    Every authenticated request needs both, so the two small lookups share one query.
    """
    memberships = select(
        literal("project").label("kind"),
        cast(Membership.project_id, String).label("key"),
        Membership.role.label("value"),
    ).where(Membership.user_id == user_id)
    accounts = select(
        literal("cluster").label("kind"),
        UserClusterAccount.cluster.label("key"),
        UserClusterAccount.username.label("value"),
    ).where(UserClusterAccount.user_id == user_id)
    roles: dict[int, str] = {}
    usernames: dict[str, str] = {}
    for kind, key, value in (await session.execute(union_all(memberships, accounts))).all():
        if kind == "project":
            roles[int(key)] = value
        else:
            usernames[key] = value
    return roles, usernames


async def get_cluster_username(session: AsyncSession, user_id: int, cluster: str) -> str | None:
    result = await session.execute(
        select(UserClusterAccount.username).where(
            UserClusterAccount.user_id == user_id, UserClusterAccount.cluster == cluster
        )
    )
    return result.scalar_one_or_none()
