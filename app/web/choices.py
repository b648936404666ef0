"""The submit context for the web pages: the shared use case with this app's clusters."""

from __future__ import annotations

from fastapi import Request
from sqlalchemy.ext.asyncio import AsyncSession

from app.job_templates.context import SubmitContext
from app.models import Project
from app.submissions import choices
from app.submissions.choices import actor_projects
from app.users.actor import Actor
from app.wiring import services_of

__all__ = ["actor_projects", "context_for", "example_project"]


async def context_for(
    request: Request, session: AsyncSession, actor: Actor, project: Project
) -> SubmitContext:
    services = services_of(request.app)
    return await choices.context_for(
        session, actor, project, services.clusters, services.schedulers
    )


def example_project(request: Request) -> Project:
    """Stands in for a project when previewing a template as someone without one."""
    clusters = services_of(request.app).cluster_names or ("testcluster",)
    return Project(id=0, name="example", slurm_account="example", cluster=clusters[0])
