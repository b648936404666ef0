"""The dashboard's disk usage panel: a fragment htmx loads after the page, so a slow or
failing command on a cluster never holds the dashboard up."""

from __future__ import annotations

import re
from dataclasses import dataclass

from babel.numbers import get_decimal_symbol, get_group_symbol
from fastapi import APIRouter, Request
from fastapi.responses import Response

from app import i18n
from app.deps import ClusterNamesDep, DiskUsageServiceDep
from app.i18n import _
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

_TONES = {"warning": "waiting", "critical": "bad"}


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


def _in_locale(number: str) -> str:
    """A number written the English way (``12,034.5``) with the reader's separators."""
    locale = i18n.current_locale()
    if locale == i18n.DEFAULT_LOCALE:
        return number
    marks: dict[str, str | int | None] = {
        ",": get_group_symbol(locale),
        ".": get_decimal_symbol(locale),
    }
    return number.translate(str.maketrans(marks))


def format_bytes(amount: int) -> str:
    """Binary units, one decimal below 100: ``2.1 GiB``, ``512 MiB``."""
    value, unit = binary_scale(amount)
    if unit == "B":
        return i18n.format_units(amount, "B", "#,##0")
    return i18n.format_units(value, unit, "#,##0.#" if value < 100 else "#,##0")


def format_count(amount: int) -> str:
    return _in_locale(f"{amount:,}")


def _status(level: Level, is_over: bool) -> str:
    if is_over:
        return _("Over quota")
    if level == "critical":
        return _("At the limit")
    return _("Near the limit") if level == "warning" else ""


def figure_view(figures: QuotaFigures, *, is_space: bool) -> FigureView:
    amount = format_bytes if is_space else format_count
    level = level_of(figures)
    percent = percent_used(figures)
    limit = figures.limit
    notes = []
    if figures.soft and figures.hard and figures.hard != figures.soft:
        notes.append(_("hard limit %(amount)s", amount=amount(figures.hard)))
    if figures.grace:
        # The grace period as the site's tool wrote it (``6days``, ``expired``).
        notes.append(_("grace %(time)s", time=figures.grace))
    if limit is None or percent is None:
        text = _("%(used)s used, no limit", used=amount(figures.used))
        return FigureView(text, level, note=", ".join(notes))
    shown = 100.0 if figures.is_over else min(round(percent, 1), 100.0)
    label = f"{percent:.0f} %"
    text = _(
        "%(used)s of %(limit)s (%(percent)s)",
        used=amount(figures.used),
        limit=amount(limit),
        percent=label,
    )
    return FigureView(text, level, shown, label, ", ".join(notes))


# Quota tools name a filesystem with whose quota it is: ``/home (user alice)``.
_OWNED = re.compile(r"(?P<where>.+) \((?P<kind>user|group|project) (?P<name>[^()\s]+)\)")


def filesystem_label(label: str) -> str:
    """The tool's label with its "(user alice)" in the reader's language."""
    found = _OWNED.fullmatch(label)
    if found is None:
        return label
    where, name = found["where"], found["name"]
    if found["kind"] == "user":
        return _("%(filesystem)s (user %(name)s)", filesystem=where, name=name)
    if found["kind"] == "group":
        return _("%(filesystem)s (group %(name)s)", filesystem=where, name=name)
    return _("%(filesystem)s (project %(name)s)", filesystem=where, name=name)


def filesystem_view(usage: FilesystemUsage) -> FilesystemView:
    level = worst_level(usage)
    return FilesystemView(
        label=filesystem_label(usage.label),
        level=level,
        status=_status(level, usage.is_over),
        tone=_TONES.get(level, "ok"),
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
