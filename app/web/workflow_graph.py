"""A workflow run drawn as inline SVG: one box per step in the column of its depth, an arrow
from each step to those waiting for it, and each step's state written in its box (colour only
repeats it). The page lists the same facts as text beside it."""

from __future__ import annotations

from collections import defaultdict
from html import escape

from markupsafe import Markup

from app.i18n import _
from app.web.jobs_fragments import state_badge
from app.workflows.service import StepView

BOX_W, BOX_H, GAP_X, GAP_Y, PAD = 170, 52, 60, 24, 12
FILL = {
    "waiting": ("#fff4d6", "#6b4a00"),
    "active": ("#e3efff", "#0b4a8a"),
    "ok": ("#e8f5ec", "#1a5c2e"),
    "bad": ("#fdecec", "#8a1616"),
    "neutral": ("#eef0f2", "#3b424a"),
}


def _positions(steps: list[StepView]) -> dict[str, tuple[float, float]]:
    rows: dict[int, int] = defaultdict(int)
    placed: dict[str, tuple[float, float]] = {}
    for view in steps:
        row = rows[view.level]
        rows[view.level] += 1
        placed[view.step.name] = (
            PAD + view.level * (BOX_W + GAP_X),
            PAD + row * (BOX_H + GAP_Y),
        )
    return placed


def _state_words(view: StepView) -> tuple[str, str]:
    if view.job is None:
        return _("not submitted"), "neutral"
    badge = state_badge(view.job.state)
    return badge.label, badge.tone


def render_run_graph(steps: list[StepView]) -> Markup:
    at = _positions(steps)
    width = max(x for x, _y in at.values()) + BOX_W + PAD
    height = max(y for _x, y in at.values()) + BOX_H + PAD
    label = escape(_("Workflow steps and the steps each waits for"))
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width:.0f} {height:.0f}" '
        f'role="img" aria-label="{label}" class="workflow-graph">',
        '<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="8" '
        'markerHeight="8" orient="auto"><path d="M0,0 L10,5 L0,10 z" fill="#4b5563"/>'
        "</marker></defs>",
    ]
    for view in steps:
        x2, y2 = at[view.step.name]
        for upstream in view.step.after:
            x1, y1 = at[upstream]
            parts.append(
                f'<line x1="{x1 + BOX_W:.0f}" y1="{y1 + BOX_H / 2:.0f}" x2="{x2:.0f}" '
                f'y2="{y2 + BOX_H / 2:.0f}" stroke="#4b5563" stroke-width="1.5" '
                'marker-end="url(#arrow)"/>'
            )
    for view in steps:
        x, y = at[view.step.name]
        words, tone = _state_words(view)
        fill, ink = FILL.get(tone, FILL["neutral"])
        parts.append(
            f'<g><rect x="{x:.0f}" y="{y:.0f}" width="{BOX_W}" height="{BOX_H}" rx="6" '
            f'fill="{fill}" stroke="{ink}"/>'
            f'<text x="{x + 10:.0f}" y="{y + 21:.0f}" font-size="14" font-weight="600" '
            f'fill="{ink}">{escape(view.step.name)}</text>'
            f'<text x="{x + 10:.0f}" y="{y + 40:.0f}" font-size="12" fill="{ink}">'
            f"{escape(words)}</text></g>"
        )
    parts.append("</svg>")
    # Every value in it is escaped above.
    return Markup("".join(parts))  # noqa: S704
