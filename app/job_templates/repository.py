"""Queries about job templates and their versions."""

from __future__ import annotations

from collections.abc import Iterable

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import selectinload

from app.models import JobTemplate, TemplateVersion


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
