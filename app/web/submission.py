"""Hands a rendered JobRequest to the jobs service, as the person who sent the form."""

from __future__ import annotations

from fastapi import Request

from app.jobs.requests import JobRequest
from app.jobs.service import JobService
from app.users.actor import Actor
from app.web.auth import web_origin


async def submit_job(
    service: JobService,
    request: Request,
    actor: Actor,
    job: JobRequest,
    idempotency_key: str | None,
) -> int:
    """Submits ``job`` for ``actor`` and returns the portal job id."""
    submitted = await service.submit(actor, job, idempotency_key, origin=web_origin(request))
    job_id: int = submitted.id
    return job_id
