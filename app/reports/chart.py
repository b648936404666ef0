"""A stacked bar chart as inline SVG, drawn on the server (no script, no external assets).

Colours come from the stylesheet (``series-N`` classes, the text and grid classes), so the
chart follows the page's light or dark scheme.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from html import escape

from app.i18n import _, format_number
from app.reports.usage import UsageReport

# CSS classes whose fill is --chart-1 … --chart-7 (portal.css); the last is "other".
PALETTE = tuple(f"series-{n}" for n in range(1, 8))
MAX_SERIES = 6
# TOP leaves a line above the plot for the unit, clear of the highest tick's label.
WIDTH, HEIGHT, LEFT, BOTTOM, TOP = 720, 280, 56, 28, 32
FONT = 12


@dataclass(frozen=True, slots=True)
class Series:
    name: str
    colour: str
    """The CSS class that gives the series its colour."""
    values: tuple[float, ...]


def chart_series(report: UsageReport, metric: str) -> list[Series]:
    """The biggest groups by ``metric``, the rest folded into one 'other' series."""
    per_group: dict[str, dict[str, float]] = defaultdict(dict)
    for cell in report.cells:
        per_group[cell.group][cell.period] = cell.figures.value(metric)
    ranked = sorted(per_group, key=lambda g: (-sum(per_group[g].values()), g))
    kept, rest = ranked[:MAX_SERIES], ranked[MAX_SERIES:]
    series = [_series(name, i, per_group[name], report.periods) for i, name in enumerate(kept)]
    if rest:
        other: dict[str, float] = defaultdict(float)
        for name in rest:
            for period, value in per_group[name].items():
                other[period] += value
        # The groups beyond the biggest ones, taken together.
        series.append(_series(_("other"), len(PALETTE) - 1, other, report.periods))
    return series


def _series(name: str, index: int, values: dict[str, float], periods: Sequence[str]) -> Series:
    colour = PALETTE[min(index, len(PALETTE) - 1)]
    return Series(name, colour, tuple(values.get(period, 0.0) for period in periods))


def _nice_ceiling(value: float) -> float:
    if value <= 0:
        return 1.0
    step = 10 ** (len(str(int(value))) - 1)
    return float(-(-value // step) * step)


def render_svg(periods: Sequence[str], series: Sequence[Series], unit: str) -> str:
    """Bars per period, stacked by series, with a y axis and a title for each segment."""
    totals = [sum(s.values[i] for s in series) for i in range(len(periods))]
    ceiling = _nice_ceiling(max(totals, default=0.0))
    plot_w, plot_h = WIDTH - LEFT - 8, HEIGHT - BOTTOM - TOP
    slot = plot_w / max(len(periods), 1)
    label = escape(_("%(unit)s per period", unit=unit))
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {HEIGHT}" '
        f'role="img" aria-label="{label}" class="usage-chart">',
        *_axis(ceiling, plot_h, unit),
    ]
    for index, period in enumerate(periods):
        parts += _bar(index, period, series, slot, plot_h / ceiling)
    parts += _period_labels(periods, slot)
    parts.append("</svg>")
    return "".join(parts)


def _axis(ceiling: float, plot_h: float, unit: str) -> list[str]:
    parts = []
    for tick in range(5):
        value = ceiling * tick / 4
        y = TOP + plot_h - plot_h * tick / 4
        parts.append(
            f'<line x1="{LEFT}" x2="{WIDTH - 8}" y1="{y:.1f}" y2="{y:.1f}" class="chart-grid"/>'
            f'<text x="{LEFT - 4}" y="{y + 4:.1f}" text-anchor="end" font-size="{FONT}">'
            f"{format_number(value, '#,##0.##')}</text>"
        )
    parts.append(f'<text x="4" y="{FONT + 2}" font-size="{FONT}">{escape(unit)}</text>')
    return parts


def _bar(index: int, period: str, series: Sequence[Series], slot: float, scale: float) -> list[str]:
    x = LEFT + index * slot + slot * 0.15
    width = max(slot * 0.7, 1.0)
    y = float(HEIGHT - BOTTOM)
    parts = []
    for item in series:
        value = item.values[index]
        if value <= 0:
            continue
        height = value * scale
        y -= height
        parts.append(
            f'<rect x="{x:.1f}" y="{y:.1f}" width="{width:.1f}" height="{height:.1f}" '
            f'class="{item.colour}"><title>{escape(item.name)} {escape(period)}: '
            f"{format_number(value, '#,##0.00')}</title></rect>"
        )
    return parts


def _period_labels(periods: Sequence[str], slot: float) -> list[str]:
    every = max(1, len(periods) // 12)
    return [
        f'<text x="{LEFT + i * slot + slot / 2:.1f}" y="{HEIGHT - 10}" text-anchor="middle" '
        f'font-size="{FONT}">{escape(period[5:] if len(periods) > 1 else period)}</text>'
        for i, period in enumerate(periods)
        if i % every == 0
    ]
