"""What the submit forms offer an actor charging one project: projects, partitions and
accounts from the cluster, the log roots and the user's home, for the web and the API alike.

The database session is released before the cluster is asked: the answer may take seconds
when it is not cached.
"""

from __future__ import annotations

from collections.abc import Mapping

from sqlalchemy.ext.asyncio import AsyncSession

from app.db import release_connection
from app.job_templates.choices import submit_context
from app.job_templates.context import SubmitContext
from app.jobs.service import AdapterLookup
from app.models import Project
from app.projects import service as projects
from app.scheduler.base import SchedulerAdapter
from app.scheduler.config import DEFAULT_LOG_ROOTS, ClusterConfig
from app.scheduler.errors import SchedulerError
from app.users import service as users
from app.users.actor import Actor


def _adapter(schedulers: AdapterLookup, cluster: str) -> SchedulerAdapter | None:
    """The cluster's adapter; None for a cluster no longer configured (the form degrades)."""
    try:
        return schedulers.get(cluster)
    except (SchedulerError, KeyError):
        return None


async def actor_projects(session: AsyncSession, actor: Actor) -> list[Project]:
    """Projects the actor may charge: memberships only, even for site administrators."""
    views = await projects.list_for_actor(session, actor)
    return [view.project for view in views if actor.is_member_of(view.project.id)]


async def context_for(
    session: AsyncSession,
    actor: Actor,
    project: Project,
    clusters: Mapping[str, ClusterConfig | None],
    schedulers: AdapterLookup,
) -> SubmitContext:
    """The pickers, roots and home for ``actor`` submitting to ``project``."""
    config = clusters.get(project.cluster)
    roots = tuple(config.log_roots) if config else DEFAULT_LOG_ROOTS
    choices = await actor_projects(session, actor)
    username = await users.cluster_username(session, actor, project.cluster)
    await release_connection(session)
    return await submit_context(
        project.cluster,
        choices,
        adapter=_adapter(schedulers, project.cluster),
        username=username,
        roots=roots,
    )
