"""Queries about users, their cluster accounts and their project roles."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from app.models import Membership, User, UserClusterAccount


async def get_by_id(session: AsyncSession, user_id: int) -> User | None:
    return await session.get(User, user_id)


async def get_by_login(session: AsyncSession, login: str) -> User | None:
    result = await session.execute(select(User).where(User.login == login))
    return result.scalar_one_or_none()


async def project_roles(session: AsyncSession, user_id: int) -> dict[int, str]:
    rows = await session.execute(
        select(Membership.project_id, Membership.role).where(Membership.user_id == user_id)
    )
    return {project_id: role for project_id, role in rows.all()}


async def cluster_usernames(session: AsyncSession, user_id: int) -> dict[str, str]:
    rows = await session.execute(
        select(UserClusterAccount.cluster, UserClusterAccount.username).where(
            UserClusterAccount.user_id == user_id
        )
    )
    return {cluster: username for cluster, username in rows.all()}


async def get_cluster_username(session: AsyncSession, user_id: int, cluster: str) -> str | None:
    result = await session.execute(
        select(UserClusterAccount.username).where(
            UserClusterAccount.user_id == user_id, UserClusterAccount.cluster == cluster
        )
    )
    return result.scalar_one_or_none()
