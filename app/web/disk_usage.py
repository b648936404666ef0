"""The dashboard's disk usage panel: a fragment htmx loads after the page, so a slow or
failing command on a cluster never holds the dashboard up."""

from __future__ import annotations

from dataclasses import dataclass

from fastapi import APIRouter, Request
from fastapi.responses import Response

from app.deps import ClusterNamesDep, DiskUsageServiceDep
from app.scheduler.disk_usage import FilesystemUsage, QuotaFigures, binary_scale
from app.storage.service import (
    ClusterDiskUsage,
    DiskUsageProblem,
    Level,
    level_of,
    percent_used,
    worst_level,
)
from app.web.auth import CurrentUser, WebContextDep
from app.web.jobs_fragments import format_time
from app.web.views import page

router = APIRouter(include_in_schema=False)

_STATUS = {"warning": ("Near the limit", "waiting"), "critical": ("At the limit", "bad")}


@dataclass(frozen=True, slots=True)
class FigureView:
    text: str
    level: Level
    percent: float | None = None
    """Shown on the bar: 0 to 100, and 100 when over quota."""
    percent_label: str = ""
    note: str = ""


@dataclass(frozen=True, slots=True)
class FilesystemView:
    label: str
    level: Level
    status: str
    tone: str
    space: FigureView
    files: FigureView


@dataclass(frozen=True, slots=True)
class ClusterPanel:
    cluster: str
    filesystems: tuple[FilesystemView, ...] = ()
    measured: str = ""
    problem: str | None = None


def format_bytes(amount: int) -> str:
    """Binary units, one decimal below 100: ``2.1 GiB``, ``512 MiB``."""
    value, unit = binary_scale(amount)
    if unit == "B":
        return f"{amount} B"
    shown = f"{value:.1f}".removesuffix(".0") if value < 100 else f"{value:.0f}"
    return f"{shown} {unit}"


def format_count(amount: int) -> str:
    return f"{amount:,}"


def figure_view(figures: QuotaFigures, *, is_space: bool) -> FigureView:
    amount = format_bytes if is_space else format_count
    level = level_of(figures)
    percent = percent_used(figures)
    limit = figures.limit
    notes = []
    if figures.soft and figures.hard and figures.hard != figures.soft:
        notes.append(f"hard limit {amount(figures.hard)}")
    if figures.grace:
        notes.append(f"grace {figures.grace}")
    if limit is None or percent is None:
        return FigureView(f"{amount(figures.used)} used, no limit", level, note=", ".join(notes))
    shown = 100.0 if figures.is_over else min(round(percent, 1), 100.0)
    label = f"{percent:.0f} %"
    text = f"{amount(figures.used)} of {amount(limit)} ({label})"
    return FigureView(text, level, shown, label, ", ".join(notes))


def filesystem_view(usage: FilesystemUsage) -> FilesystemView:
    level = worst_level(usage)
    status, tone = _STATUS.get(level, ("", "ok"))
    if usage.is_over:
        status = "Over quota"
    return FilesystemView(
        label=usage.label,
        level=level,
        status=status,
        tone=tone,
        space=figure_view(usage.space, is_space=True),
        files=figure_view(usage.files, is_space=False),
    )


def cluster_panel(found: ClusterDiskUsage | DiskUsageProblem) -> ClusterPanel:
    if isinstance(found, DiskUsageProblem):
        return ClusterPanel(found.cluster, problem=found.message)
    filesystems = tuple(filesystem_view(usage) for usage in found.filesystems)
    return ClusterPanel(found.cluster, filesystems, format_time(found.measured_at))


@router.get("/dashboard/disk-usage", name="dashboard_disk_usage")
async def disk_usage_panel(
    request: Request,
    actor: CurrentUser,
    web: WebContextDep,
    names: ClusterNamesDep,
    service: DiskUsageServiceDep,
) -> Response:
    """The panel with the actor's own figures on every cluster that reports them."""
    found = await service.overview(actor, names)
    panels = [cluster_panel(item) for item in found]
    return page(request, web, "dashboard/_disk_usage.html", {"disk_usage": panels})
