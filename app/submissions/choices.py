"""What the submit forms offer an actor charging one project: projects, partitions and
accounts from the cluster, the log roots and the user's home, for the web and the API alike.

The cluster is asked after the reads (its adapters end the request's read phase first, see
app/cluster_calls.py): the answer may take seconds when it is not cached.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from sqlalchemy.ext.asyncio import AsyncSession

from app.job_templates.choices import submit_context
from app.job_templates.context import SubmitContext
from app.jobs.service import AdapterLookup
from app.models.projects import Project
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
    return await submit_context(
        project.cluster,
        choices,
        adapter=_adapter(schedulers, project.cluster),
        username=username,
        roots=roots,
    )


@dataclass(frozen=True, slots=True)
class SubmitChoices:
    """The submit context from the clusters this portal was started with (built once, in
    the wiring, for both surfaces)."""

    clusters: Mapping[str, ClusterConfig]
    schedulers: AdapterLookup
    cluster_names: tuple[str, ...]

    async def context_for(
        self, session: AsyncSession, actor: Actor, project: Project
    ) -> SubmitContext:
        return await context_for(session, actor, project, self.clusters, self.schedulers)

    def example_project(self) -> Project:
        """Stands in for a project when previewing a template as someone without one."""
        cluster = self.cluster_names[0] if self.cluster_names else "testcluster"
        return Project(id=0, name="example", slurm_account="example", cluster=cluster)
