"""Fills partition and account pickers from the cluster, degrading to what the portal knows.

A cluster that is slow or down must not break the submit form: when the scheduler cannot
answer, the project's own account and the template's listed partitions are offered, and
sbatch stays the final judge.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence

from app.job_templates.context import PartitionChoice, SubmitContext
from app.models.projects import Project
from app.scheduler.base import SchedulerAdapter
from app.scheduler.capabilities import capabilities_of
from app.scheduler.config import DEFAULT_LOG_ROOTS
from app.scheduler.errors import SchedulerError
from app.scheduler.types import PartitionInfo

logger = logging.getLogger(__name__)
CACHE_SECONDS = 60.0
# Per process, and safe so with several web workers (ADR 0029): it holds the cluster's
# answer, which changes outside the portal anyway, each worker asks at most once a minute per
# user, and sbatch remains the judge of what is submitted.
_cache: dict[tuple[str, str], tuple[float, tuple[PartitionChoice, ...], frozenset[str] | None]] = {}


def _minutes(info: PartitionInfo) -> int | None:
    if info.max_time is None:
        return None
    return int(info.max_time.total_seconds() // 60)


async def _ask_cluster(
    adapter: SchedulerAdapter, username: str
) -> tuple[tuple[PartitionChoice, ...], frozenset[str] | None]:
    partitions: tuple[PartitionChoice, ...] = ()
    accounts: frozenset[str] | None = None
    try:
        infos = await adapter.partitions()
        partitions = tuple(PartitionChoice(p.name, _minutes(p), p.is_default) for p in infos)
        accounts = frozenset(a.account for a in await adapter.associations(username))
    except SchedulerError as error:
        logger.warning("cluster choices unavailable, using the portal's own: %s", error)
    return partitions, accounts


async def _cluster_choices(
    cluster: str, adapter: SchedulerAdapter | None, username: str | None
) -> tuple[tuple[PartitionChoice, ...], frozenset[str] | None]:
    if adapter is None or username is None:
        return (), None
    key = (cluster, username)
    cached = _cache.get(key)
    if cached is not None and cached[0] > time.monotonic():
        return cached[1], cached[2]
    partitions, accounts = await _ask_cluster(adapter, username)
    if partitions:
        _cache[key] = (time.monotonic() + CACHE_SECONDS, partitions, accounts)
    return partitions, accounts


async def submit_context(
    cluster: str,
    projects: Sequence[Project],
    *,
    adapter: SchedulerAdapter | None,
    username: str | None,
    roots: tuple[str, ...] = DEFAULT_LOG_ROOTS,
) -> SubmitContext:
    """Choices for one user on one cluster; ``projects`` are the user's projects there."""
    partitions, associated = await _cluster_choices(cluster, adapter, username)
    accounts = tuple(p.slurm_account for p in projects if p.cluster == cluster)
    if associated is not None:
        accounts = tuple(a for a in accounts if a in associated)
    return SubmitContext(
        cluster=cluster,
        accounts=accounts,
        partitions=partitions,
        roots=roots,
        home=f"/home/{username}" if username else None,
        scheduler=capabilities_of(adapter).scheduler,
    )
