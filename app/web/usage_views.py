"""The usage page's efficiency figures as the page prints them.

A ratio of used to requested above 1 is not an efficiency of over 100 %: the job used more
than it asked for (Slurm did not enforce the limit, or sampled it late). Such a figure is
shown as "over 100 %" with how far over, in a warning colour, never as "822 %".
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from babel.numbers import format_decimal
from babel.support import LazyProxy

from app import i18n
from app.i18n import _, lazy_gettext, ngettext
from app.reports.efficiency import GroupEfficiency, WastefulJob

# How far over the request a figure is; %(times)s is the ratio of used to requested.
CPU_OVER = lazy_gettext("used %(times)s times the CPU time of its CPUs")
MEMORY_OVER = lazy_gettext("used %(times)s times the memory asked for")
TIME_OVER = lazy_gettext("ran %(times)s times its time limit")


def waste_patterns() -> dict[str, str]:
    """What each waste flag of ``app.reports.efficiency`` means, in the reader's language."""
    return {
        "memory_oversized": _("asked for 10 times the memory it used or more"),
        "cpu_underused": _("CPUs busy under %(percent)s %% of the time", percent=25),
        "time_limit_oversized": _("time limit 10 times its run time or more"),
    }


@dataclass(frozen=True, slots=True)
class Share:
    """A used/requested ratio: ``text`` to print and, above 100 %, ``over`` in words."""

    text: str
    over: str | None = None


def share(ratio: float | None, over_words: str | LazyProxy) -> Share:
    if ratio is None:
        return Share("—")
    percent = round(ratio * 100)
    # A no-break space keeps "12 %" on one line in a narrow column.
    if percent <= 100:
        return Share(f"{i18n.format_number(percent, '#,##0')}\u00a0%")
    times = i18n.format_number(ratio, "#,##0.0")
    return Share(_("over\u00a0100\u00a0%"), str(over_words) % {"times": times})


@dataclass(frozen=True, slots=True)
class EfficiencyRow:
    group: str
    cpu: Share
    memory: Share
    jobs: int


def efficiency_rows(groups: Sequence[GroupEfficiency]) -> list[EfficiencyRow]:
    return [
        EfficiencyRow(g.group, share(g.cpu, CPU_OVER), share(g.memory, MEMORY_OVER), g.jobs)
        for g in groups
    ]


@dataclass(frozen=True, slots=True)
class WastefulRow:
    slurm_id: str
    job_url: str | None
    """The job's page, when the job is in the portal and the reader may see it."""
    user: str
    account: str
    cpu: Share
    memory: Share
    time: Share
    patterns: tuple[str, ...]


def wasteful_rows(
    jobs: Sequence[WastefulJob], portal_ids: Mapping[tuple[str, str], int]
) -> list[WastefulRow]:
    rows = []
    patterns = waste_patterns()
    for job in jobs:
        portal_id = portal_ids.get((job.row.cluster, job.row.job_id))
        efficiency = job.efficiency
        rows.append(
            WastefulRow(
                slurm_id=job.row.job_id,
                job_url=f"/jobs/{portal_id}" if portal_id is not None else None,
                user=job.row.user_name or "—",
                account=job.row.account or "—",
                cpu=share(efficiency.cpu, CPU_OVER),
                memory=share(efficiency.memory, MEMORY_OVER),
                time=share(efficiency.time, TIME_OVER),
                patterns=tuple(patterns.get(flag, flag) for flag in efficiency.flags),
            )
        )
    return rows


def waste_paging(page: int, size: int, shown: int, total: int) -> dict[str, Any]:
    """What the wasteful jobs' list says it shows, and the pages before and after it."""
    first = (page - 1) * size
    locale = i18n.current_locale()
    return {
        "summary": ngettext(
            "%(first)s to %(last)s of %(total)s wasteful job, newest first.",
            "%(first)s to %(last)s of %(total)s wasteful jobs, newest first.",
            total,
            first=format_decimal(first + 1, locale=locale),
            last=format_decimal(first + shown, locale=locale),
            total=format_decimal(total, locale=locale),
        )
        if shown
        else "",
        "newer": page - 1 if page > 1 else None,
        "older": page + 1 if first + shown < total else None,
    }
