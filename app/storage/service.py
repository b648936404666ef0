"""A user's own disk usage on a cluster, from the site's command run as that user.

Figures are kept per cluster username for a minute (a failure for a shorter time), so the
dashboard does not run the command over SSH on every page load. No one can ask for another
user's figures: the username always comes from the actor.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Literal

from app.errors import NotFound, PortalError, ServiceUnavailable
from app.i18n import _
from app.scheduler.base import SchedulerAdapter
from app.scheduler.disk_usage import FilesystemUsage, QuotaFigures
from app.scheduler.errors import (
    DiskUsageNotConfigured,
    DiskUsageUnavailable,
    SchedulerError,
    SchedulerTimeout,
    SchedulerUnavailable,
)
from app.scheduler.registry import Schedulers, UnknownCluster
from app.users.actor import Actor

CACHE_SECONDS = 60.0
FAILURE_CACHE_SECONDS = 15.0
WARNING_PERCENT = 80.0
CRITICAL_PERCENT = 95.0
Level = Literal["ok", "warning", "critical"]
# Why a measurement failed, kept untranslated so a cached failure reads in each reader's
# language: the cluster has no command, the command failed (its own words), it did not
# finish in time, or the cluster did not answer.
FailureKind = Literal["not_configured", "refused", "timeout", "unreachable"]


class DiskUsageNotReported(NotFound):
    """The cluster has no disk usage command configured."""


@dataclass(frozen=True, slots=True)
class ClusterDiskUsage:
    cluster: str
    username: str
    filesystems: tuple[FilesystemUsage, ...]
    measured_at: datetime


@dataclass(frozen=True, slots=True)
class DiskUsageProblem:
    """Why a cluster's figures could not be shown, in words for the user."""

    cluster: str
    message: str


@dataclass(frozen=True, slots=True)
class _Failure:
    error: type[PortalError]
    kind: FailureKind
    cluster: str
    said: str = ""
    """What the command or the transport said, told as it was said."""

    def message(self) -> str:
        if self.kind == "not_configured":
            return _("Cluster %(cluster)s does not report disk usage.", cluster=self.cluster)
        if self.kind == "timeout":
            return _("Disk usage is not available: the command did not finish in time.")
        if self.kind == "unreachable":
            return _("Disk usage is not available: the cluster did not answer; try again shortly.")
        return _("Disk usage is not available: %(reason)s", reason=self.said)


def percent_used(figures: QuotaFigures) -> float | None:
    """How much of the first limit is used, in percent; None when there is no limit."""
    limit = figures.limit
    return None if not limit else figures.used * 100 / limit


def level_of(figures: QuotaFigures) -> Level:
    """critical over quota or from 95 %, warning from 80 %, else ok."""
    percent = percent_used(figures)
    if figures.is_over or (percent is not None and percent >= CRITICAL_PERCENT):
        return "critical"
    if percent is not None and percent >= WARNING_PERCENT:
        return "warning"
    return "ok"


def worst_level(usage: FilesystemUsage) -> Level:
    """The filesystem's level: the worse of space and files."""
    levels = {level_of(usage.space), level_of(usage.files)}
    return next(level for level in ("critical", "warning", "ok") if level in levels)


class DiskUsageService:
    """Reads users' disk usage through the clusters' adapters, with a short cache.

    The cache is per web worker (ADR 0029): a figure read from the cluster, which the portal
    never writes, so another worker reading it afresh only costs one more command."""

    def __init__(
        self,
        adapters: Schedulers,
        *,
        cache_seconds: float = CACHE_SECONDS,
        failure_cache_seconds: float = FAILURE_CACHE_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._adapters = adapters
        self._cache_seconds = cache_seconds
        self._failure_cache_seconds = failure_cache_seconds
        self._clock = clock
        self._kept: dict[tuple[str, str], tuple[float, ClusterDiskUsage | _Failure]] = {}

    async def disk_usage(self, actor: Actor, cluster: str) -> ClusterDiskUsage:
        """The actor's figures on ``cluster``.

        NotFound for an unknown cluster or one the actor has no account on,
        DiskUsageNotReported when it has no disk usage command, ServiceUnavailable when the
        command fails (its own words in the message).
        """
        try:
            adapter = self._adapters.get(cluster)
        except UnknownCluster:
            raise NotFound(_("No cluster named %(cluster)s.", cluster=cluster)) from None
        username = actor.username_on(cluster)
        if not username:
            raise NotFound(_("You have no account on cluster %(cluster)s.", cluster=cluster))
        outcome = await self._outcome(adapter, cluster, username)
        if isinstance(outcome, _Failure):
            raise outcome.error(outcome.message())
        return outcome

    async def overview(
        self, actor: Actor, clusters: Sequence[str]
    ) -> list[ClusterDiskUsage | DiskUsageProblem]:
        """Every cluster the actor has an account on that reports disk usage, asked at once."""
        mine = [cluster for cluster in clusters if actor.username_on(cluster)]
        found = await asyncio.gather(*(self._shown(actor, cluster) for cluster in mine))
        return [item for item in found if item is not None]

    async def _shown(
        self, actor: Actor, cluster: str
    ) -> ClusterDiskUsage | DiskUsageProblem | None:
        try:
            return await self.disk_usage(actor, cluster)
        except DiskUsageNotReported:
            return None
        except PortalError as error:
            return DiskUsageProblem(cluster, error.detail)

    async def _outcome(
        self, adapter: SchedulerAdapter, cluster: str, username: str
    ) -> ClusterDiskUsage | _Failure:
        key = (cluster, username)
        now = self._clock()
        kept = self._kept.get(key)
        if kept is not None and kept[0] > now:
            return kept[1]
        outcome = await _measure(adapter, cluster, username)
        is_figures = isinstance(outcome, ClusterDiskUsage)
        seconds = self._cache_seconds if is_figures else self._failure_cache_seconds
        self._kept[key] = (now + seconds, outcome)
        return outcome


async def _measure(
    adapter: SchedulerAdapter, cluster: str, username: str
) -> ClusterDiskUsage | _Failure:
    try:
        found = await adapter.disk_usage(username)
    except DiskUsageNotConfigured:
        return _Failure(DiskUsageNotReported, "not_configured", cluster)
    except DiskUsageUnavailable as error:
        return _Failure(ServiceUnavailable, "refused", cluster, str(error))
    except SchedulerTimeout:
        return _Failure(ServiceUnavailable, "timeout", cluster)
    except SchedulerUnavailable:
        return _Failure(ServiceUnavailable, "unreachable", cluster)
    except SchedulerError as error:
        # What the transport refused (e.g. the login node, the user's certificate) is told
        # as it was said: the user can pass it on to the site's support.
        return _Failure(ServiceUnavailable, "refused", cluster, str(error))
    return ClusterDiskUsage(cluster, username, tuple(found), datetime.now(UTC))
