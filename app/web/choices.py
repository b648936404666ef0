"""The submit context (pickers, roots, home) for an actor charging one project."""

from __future__ import annotations

from fastapi import Request
from sqlalchemy.ext.asyncio import AsyncSession

from app.db import release_connection
from app.job_templates.choices import submit_context
from app.job_templates.context import SubmitContext
from app.models import Project
from app.projects import service as projects
from app.scheduler.base import SchedulerAdapter
from app.scheduler.errors import SchedulerError
from app.users import service as users
from app.users.actor import Actor

DEFAULT_ROOTS = ("/home", "/scratch")


def scheduler_for(request: Request, cluster: str) -> SchedulerAdapter | None:
    registry = getattr(request.app.state, "schedulers", None)
    if registry is None:
        return None
    try:
        adapter: SchedulerAdapter = registry.get(cluster)
    except (SchedulerError, KeyError):
        return None
    return adapter


async def actor_projects(session: AsyncSession, actor: Actor) -> list[Project]:
    """Projects the actor may charge: memberships only, even for site administrators."""
    views = await projects.list_for_actor(session, actor)
    return [view.project for view in views if actor.is_member_of(view.project.id)]


async def context_for(
    request: Request, session: AsyncSession, actor: Actor, project: Project
) -> SubmitContext:
    config = request.app.state.clusters.get(project.cluster)
    roots = tuple(config.log_roots) if config else DEFAULT_ROOTS
    choices = await actor_projects(session, actor)
    username = await users.cluster_username(session, actor, project.cluster)
    # The choices may come from the cluster (seconds when uncached).
    await release_connection(session)
    return await submit_context(
        project.cluster,
        choices,
        adapter=scheduler_for(request, project.cluster),
        username=username,
        roots=roots,
    )


def example_project(request: Request) -> Project:
    """Stands in for a project when previewing a template as someone without one."""
    clusters = sorted(request.app.state.clusters) or ["testcluster"]
    return Project(id=0, name="example", slurm_account="example", cluster=clusters[0])
