"""Hands a rendered JobRequest to the jobs service the application was started with."""

from __future__ import annotations

from fastapi import Request
from sqlalchemy.ext.asyncio import AsyncSession

from app.db import release_connection
from app.jobs.requests import JobRequest
from app.jobs.service import JobService
from app.users.actor import Actor
from app.web.auth import web_origin
from app.wiring import services_of


def job_service_of(request: Request) -> JobService:
    """The jobs service the application was started with."""
    return services_of(request.app).jobs


async def submit_job(
    request: Request,
    session: AsyncSession,
    actor: Actor,
    job: JobRequest,
    idempotency_key: str | None,
) -> int:
    """Submits ``job`` for ``actor`` and returns the portal job id."""
    service = job_service_of(request)
    await release_connection(session)
    submitted = await service.submit(actor, job, idempotency_key, origin=web_origin(request))
    job_id: int = submitted.id
    return job_id


async def check_job(request: Request, session: AsyncSession, actor: Actor, job: JobRequest) -> None:
    """Asks the cluster whether it would take ``job``; raises what a submission would."""
    service = job_service_of(request)
    await release_connection(session)
    await service.check(actor, job)
