"""Queries about projects and memberships."""

from __future__ import annotations

from collections.abc import Iterable

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from app.models.projects import Membership, Project
from app.models.users import User


async def get_by_id(session: AsyncSession, project_id: int) -> Project | None:
    return await session.get(Project, project_id)


async def list_by_ids(
    session: AsyncSession, project_ids: Iterable[int], *, active_only: bool = True
) -> list[Project]:
    ids = list(project_ids)
    if not ids:
        return []
    query = select(Project).where(Project.id.in_(ids)).order_by(Project.name)
    if active_only:
        query = query.where(Project.is_active)
    return list((await session.execute(query)).scalars())


async def list_all(session: AsyncSession) -> list[Project]:
    result = await session.execute(select(Project).order_by(Project.name))
    return list(result.scalars())


async def list_members(session: AsyncSession, project_id: int) -> list[tuple[User, str]]:
    result = await session.execute(
        select(User, Membership.role)
        .join(Membership, Membership.user_id == User.id)
        .where(Membership.project_id == project_id)
        .order_by(User.login)
    )
    return [(user, role) for user, role in result.all()]


async def get_by_account(session: AsyncSession, cluster: str, account: str) -> Project | None:
    result = await session.execute(
        select(Project).where(Project.cluster == cluster, Project.slurm_account == account)
    )
    return result.scalar_one_or_none()
