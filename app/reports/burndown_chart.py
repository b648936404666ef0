"""A project's burn-down as inline SVG drawn on the server: the use so far day by day, the
allocation as a line, and the projection at the current rate to the day it runs out."""

from __future__ import annotations

from datetime import date
from html import escape

from app.i18n import _
from app.reports.allocation import Burndown
from app.reports.chart import FONT, _nice_ceiling

WIDTH, HEIGHT, LEFT, RIGHT, TOP, BOTTOM = 720, 280, 64, 16, 32, 28
USED, LIMIT, PROJECTED = "#2563eb", "#b91c1c", "#6b7280"
MAX_PROJECTION_DAYS = 365


def _scale(found: Burndown) -> tuple[date, date, float]:
    first = found.days[0][0]
    last = found.days[-1][0]
    if found.runs_out_on is not None and found.runs_out_on > last:
        last = min(found.runs_out_on, date.fromordinal(last.toordinal() + MAX_PROJECTION_DAYS))
    top = max(found.limit_minutes or 0, found.used_minutes, 1.0)
    # Four equal steps of a round size, so every tick is a round number.
    return first, last, 4 * _nice_ceiling(top * 1.05 / 4)


def render_burndown(found: Burndown) -> str:
    """The chart; its label says in words what it shows, for readers who cannot see it."""
    first, last, ceiling = _scale(found)
    span = max((last - first).days, 1)
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM

    def x(day: date) -> float:
        return LEFT + plot_w * (day - first).days / span

    def y(minutes: float) -> float:
        return TOP + plot_h - plot_h * minutes / ceiling

    label = escape(summary(found))
    unit = escape(_("CPU minutes used"))
    allocation = escape(_("allocation"))
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {HEIGHT}" role="img" '
        f'aria-label="{label}" class="usage-chart burndown-chart">',
        f'<text x="4" y="{FONT + 2}" font-size="{FONT}">{unit}</text>',
    ]
    for tick in range(5):
        value = ceiling * tick / 4
        parts.append(
            f'<line x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{y(value):.1f}" y2="{y(value):.1f}" '
            f'stroke="#e5e7eb"/><text x="{LEFT - 4}" y="{y(value) + 4:.1f}" text-anchor="end" '
            f'font-size="{FONT}">{minutes(value)}</text>'
        )
    points = " ".join(f"{x(day):.1f},{y(used):.1f}" for day, used in found.days)
    parts.append(f'<polyline points="{points}" fill="none" stroke="{USED}" stroke-width="2"/>')
    if found.limit_minutes:
        parts.append(
            f'<line x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{y(found.limit_minutes):.1f}" '
            f'y2="{y(found.limit_minutes):.1f}" stroke="{LIMIT}" stroke-width="2"/>'
            f'<text x="{WIDTH - RIGHT}" y="{y(found.limit_minutes) - 4:.1f}" text-anchor="end" '
            f'font-size="{FONT}" fill="{LIMIT}">{allocation}</text>'
        )
    if found.runs_out_on is not None and found.limit_minutes and found.runs_out_on > first:
        today, used = found.days[-1]
        end = min(found.runs_out_on, last)
        reached = min(found.limit_minutes, used + found.per_day * (end - today).days)
        parts.append(
            f'<line x1="{x(today):.1f}" y1="{y(used):.1f}" x2="{x(end):.1f}" y2="{y(reached):.1f}" '
            f'stroke="{PROJECTED}" stroke-width="2" stroke-dasharray="6 4"/>'
        )
    for day in (first, last):
        anchor = "start" if day == first else "end"
        parts.append(
            f'<text x="{x(day):.1f}" y="{HEIGHT - 8}" text-anchor="{anchor}" '
            f'font-size="{FONT}">{day.isoformat()}</text>'
        )
    parts.append("</svg>")
    return "".join(parts)


def minutes(value: float) -> str:
    """Whole minutes, or tenths below a hundred (short jobs use fractions of a minute)."""
    if value >= 100 or value == int(value):
        return f"{value:,.0f}"
    return f"{value:.1f}"


def summary(found: Burndown) -> str:
    """The burn-down in one sentence: what the chart shows."""
    used = minutes(found.used_minutes)
    if found.limit_minutes is None:
        return _("%(used)s CPU minutes used; this project has no allocation.", used=used)
    facts = {"used": used, "limit": f"{found.limit_minutes:,}"}
    if found.runs_out_on is None:
        return _(
            "%(used)s of %(limit)s CPU minutes used; nothing is being used at the moment, "
            "so it does not run out at the current rate.",
            **facts,
        )
    return _(
        "%(used)s of %(limit)s CPU minutes used; at the current rate of %(rate)s a day it "
        "runs out on %(day)s.",
        rate=minutes(found.per_day),
        day=found.runs_out_on.isoformat(),
        **facts,
    )
