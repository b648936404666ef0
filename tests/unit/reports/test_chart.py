"""The usage chart's labels stay apart: the unit sits above the highest tick's label."""

from __future__ import annotations

import re

from app.reports.chart import FONT, Series, render_svg


def _texts(svg: str) -> list[tuple[float, float, str]]:
    found = re.findall(r'<text x="([\d.]+)" y="([\d.]+)"[^>]*>([^<]*)</text>', svg)
    return [(float(x), float(y), text) for x, y, text in found]


def test_the_unit_does_not_overlap_the_highest_tick() -> None:
    svg = render_svg(["2026-11-01", "2026-11-02"], [Series("physics", "#000", (3.0, 7.0))], "CPU-h")
    texts = _texts(svg)
    unit = next(t for t in texts if t[2] == "CPU-h")
    ticks = [t for t in texts if t[0] < 56 and t[2] != "CPU-h"]
    highest_tick = min(ticks, key=lambda t: t[1])
    assert highest_tick[2] == "7"
    # Baselines at least one line apart: the unit's glyphs end above the tick's.
    assert highest_tick[1] - unit[1] >= FONT
