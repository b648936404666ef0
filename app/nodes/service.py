"""The nodes view: where a user's job can run now, from what the poller last stored.

Never asks the scheduler: the poller reads every node and every partition's access rules in
one call on its cycle (ADR 0025), and this reads the stored copy. A user sees the nodes of the
partitions open to one of their projects on that cluster; a site administrator sees them all.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from app.errors import NotFound
from app.i18n import _
from app.models.clusters import ClusterStatus
from app.models.projects import Project
from app.nodes.records import report_from
from app.scheduler.nodes import NodeInfo, PartitionAccess
from app.users.actor import Actor


@dataclass(frozen=True, slots=True)
class NodesView:
    """What the signed-in user may use on one cluster, as of ``read_at``."""

    cluster: str
    read_at: datetime | None
    partitions: tuple[str, ...]
    """The partitions the user may submit to (all of them for a site administrator)."""
    nodes: tuple[NodeInfo, ...]
    """The nodes in those partitions, narrowed by the filters asked for."""
    partition: str | None = None
    available_only: bool = False

    @property
    def is_reported(self) -> bool:
        return self.read_at is not None


async def _accounts_on(session: AsyncSession, actor: Actor, cluster: str) -> list[str]:
    """The Slurm accounts of the actor's projects on ``cluster``."""
    if not actor.project_roles:
        return []
    rows = await session.scalars(
        select(Project.slurm_account).where(
            Project.cluster == cluster, Project.id.in_(list(actor.project_roles))
        )
    )
    return list(rows)


def usable_partitions(
    partitions: Sequence[PartitionAccess], actor: Actor, accounts: Sequence[str], cluster: str
) -> tuple[str, ...]:
    if actor.is_site_admin:
        return tuple(p.name for p in partitions)
    username = actor.username_on(cluster)
    names = [username] if username else []
    return tuple(p.name for p in partitions if p.is_up and p.admits(accounts, names))


def _narrowed(
    nodes: Sequence[NodeInfo], partitions: Sequence[str], available_only: bool
) -> tuple[NodeInfo, ...]:
    wanted = set(partitions)
    shown = [n for n in nodes if wanted.intersection(n.partitions)]
    if available_only:
        shown = [n for n in shown if n.state.takes_jobs and n.cpus_idle > 0]
    return tuple(shown)


async def nodes_view(
    session: AsyncSession,
    actor: Actor,
    cluster: str,
    cluster_names: Sequence[str],
    *,
    partition: str | None = None,
    available_only: bool = False,
) -> NodesView:
    """The nodes ``actor`` may use on ``cluster``; ``partition`` narrows to one of them and
    ``available_only`` to nodes that take jobs and have an idle CPU.

    NotFound for a cluster the portal does not serve or a partition not open to the actor.
    """
    if cluster not in cluster_names:
        raise NotFound(_("No cluster named %(cluster)s.", cluster=cluster))
    row = await session.get(ClusterStatus, cluster)
    if row is None or row.nodes_at is None:
        return NodesView(cluster, None, (), ())
    report = report_from(row.nodes, row.node_partitions)
    accounts = await _accounts_on(session, actor, cluster)
    usable = usable_partitions(report.partitions, actor, accounts, cluster)
    if partition is not None and partition not in usable:
        raise NotFound(_("No partition named %(partition)s that you may use.", partition=partition))
    chosen = (partition,) if partition is not None else usable
    nodes = _narrowed(report.nodes, chosen, available_only)
    return NodesView(cluster, row.nodes_at, usable, nodes, partition, available_only)
