"""Queries about job templates and their versions."""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache
from typing import Any

from sqlalchemy import BindParameter, ColumnElement, and_, bindparam, func, or_, select
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import selectinload

from app.models.job_templates import JobTemplate, TemplateVersion
from app.models.jobs import Job


def _usable_by(user_id: BindParameter[Any], project_ids: BindParameter[Any]) -> ColumnElement[bool]:
    """``service.can_use`` as SQL, for someone who is not a site admin."""
    return or_(
        JobTemplate.owner_user_id == user_id,
        JobTemplate.scope == "site",
        and_(JobTemplate.scope == "project", JobTemplate.project_id.in_(project_ids)),
    )


async def names(
    session: AsyncSession, condition: ColumnElement[bool] | None
) -> list[tuple[int, str]]:
    query = select(JobTemplate.id, JobTemplate.name).order_by(JobTemplate.name)
    if condition is not None:
        query = query.where(condition)
    return [(row.id, row.name) for row in (await session.execute(query)).all()]


@lru_cache(maxsize=1)
def _names_usable_query() -> Any:
    """``names`` under ``_usable_by``, built once: every job list page asks (its filter)."""
    usable = _usable_by(bindparam("user_id"), bindparam("project_ids", expanding=True))
    return select(JobTemplate.id, JobTemplate.name).where(usable).order_by(JobTemplate.name)


async def names_usable_by(
    session: AsyncSession, user_id: int, project_ids: Iterable[int]
) -> list[tuple[int, str]]:
    values = {"user_id": user_id, "project_ids": list(project_ids)}
    return [(row.id, row.name) for row in (await session.execute(_names_usable_query(), values))]


async def submitted_from(session: AsyncSession, user_id: int) -> list[tuple[int, str, int, int]]:
    """(id, name, jobs, newest job id) of each unarchived template the user submitted from."""
    uses = func.count(Job.id).label("uses")
    last = func.max(Job.id).label("last")
    query = (
        select(JobTemplate.id, JobTemplate.name, uses, last)
        .join(TemplateVersion, TemplateVersion.template_id == JobTemplate.id)
        .join(Job, Job.template_version_id == TemplateVersion.id)
        .where(Job.owner_user_id == user_id, JobTemplate.is_archived.is_(False))
        .group_by(JobTemplate.id, JobTemplate.name)
    )
    return [(r.id, r.name, r.uses, r.last) for r in (await session.execute(query)).all()]


async def get_by_id(session: AsyncSession, template_id: int) -> JobTemplate | None:
    result = await session.execute(
        select(JobTemplate)
        .where(JobTemplate.id == template_id)
        .options(selectinload(JobTemplate.current_version))
    )
    return result.scalar_one_or_none()


async def _listed(session: AsyncSession, *conditions: object) -> list[JobTemplate]:
    result = await session.execute(
        select(JobTemplate)
        .where(~JobTemplate.is_archived, *conditions)  # type: ignore[arg-type]
        .options(selectinload(JobTemplate.current_version))
        .order_by(JobTemplate.name, JobTemplate.id)
    )
    return list(result.scalars())


async def list_personal(session: AsyncSession, owner_user_id: int) -> list[JobTemplate]:
    return await _listed(
        session, JobTemplate.scope == "personal", JobTemplate.owner_user_id == owner_user_id
    )


async def list_for_projects(session: AsyncSession, project_ids: Iterable[int]) -> list[JobTemplate]:
    ids = list(project_ids)
    if not ids:
        return []
    return await _listed(session, JobTemplate.scope == "project", JobTemplate.project_id.in_(ids))


async def list_site(session: AsyncSession) -> list[JobTemplate]:
    return await _listed(session, JobTemplate.scope == "site")


async def get_site_by_name(session: AsyncSession, name: str) -> JobTemplate | None:
    result = await session.execute(
        select(JobTemplate)
        .where(JobTemplate.scope == "site", JobTemplate.name == name)
        .options(selectinload(JobTemplate.current_version))
    )
    return result.scalars().first()


async def list_versions(session: AsyncSession, template_id: int) -> list[TemplateVersion]:
    result = await session.execute(
        select(TemplateVersion)
        .where(TemplateVersion.template_id == template_id)
        .order_by(TemplateVersion.version.desc())
    )
    return list(result.scalars())


async def next_version_number(session: AsyncSession, template_id: int) -> int:
    result = await session.execute(
        select(func.max(TemplateVersion.version)).where(TemplateVersion.template_id == template_id)
    )
    return int(result.scalar_one() or 0) + 1
