"""Queries about projects and memberships."""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache
from typing import Any

from sqlalchemy import BindParameter, bindparam, select
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


@lru_cache(maxsize=1)
def _names_query() -> Any:
    """Built once: every job list page asks (its project filter)."""
    ids: BindParameter[list[int]] = bindparam("ids", expanding=True)
    return select(Project.id, Project.name).where(Project.id.in_(ids)).order_by(Project.name)


async def names_by_ids(session: AsyncSession, project_ids: Iterable[int]) -> list[tuple[int, str]]:
    """(id, name) of these projects, inactive ones included, by name."""
    ids = list(project_ids)
    if not ids:
        return []
    found = await session.execute(_names_query(), {"ids": ids})
    return [(id_, name) for id_, name in found.all()]


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
