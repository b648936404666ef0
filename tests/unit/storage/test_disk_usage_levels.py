"""How near its limit a figure is: the thresholds both surfaces colour by."""

from __future__ import annotations

import pytest

from app.scheduler.disk_usage import FilesystemUsage, QuotaFigures
from app.storage.service import level_of, percent_used, worst_level
from app.web.disk_usage import figure_view, format_bytes

GiB = 1024**3


@pytest.mark.parametrize(
    ("figures", "level"),
    [
        (QuotaFigures(79, hard=100), "ok"),
        (QuotaFigures(80, hard=100), "warning"),
        (QuotaFigures(94, hard=100), "warning"),
        (QuotaFigures(95, hard=100), "critical"),
        (QuotaFigures(100, hard=100), "critical"),
        (QuotaFigures(10, hard=100, is_marked_over=True), "critical"),
        (QuotaFigures(10**12), "ok"),
    ],
)
def test_amber_from_80_and_red_from_95_percent_or_over_quota(
    figures: QuotaFigures, level: str
) -> None:
    assert level_of(figures) == level


def test_the_soft_quota_is_the_limit_that_counts_first() -> None:
    figures = QuotaFigures(90, soft=100, hard=200)
    assert percent_used(figures) == 90
    assert level_of(figures) == "warning"
    assert percent_used(QuotaFigures(90)) is None


def test_a_filesystem_is_as_bad_as_its_worse_figure() -> None:
    usage = FilesystemUsage("/home", QuotaFigures(1, hard=100), QuotaFigures(97, hard=100), "")
    assert worst_level(usage) == "critical"


@pytest.mark.parametrize(
    ("amount", "text"),
    [
        (512, "512 B"),
        (1536, "1.5 KiB"),
        (2 * GiB, "2 GiB"),
        (round(2.14 * GiB), "2.1 GiB"),
        (150 * GiB, "150 GiB"),
    ],
)
def test_sizes_are_shown_in_binary_units(amount: int, text: str) -> None:
    assert format_bytes(amount) == text


def test_a_figure_over_quota_fills_its_bar_and_says_its_grace() -> None:
    shown = figure_view(
        QuotaFigures(11 * GiB, soft=10 * GiB, hard=12 * GiB, grace="6days", is_marked_over=True),
        is_space=True,
    )
    assert shown.text == "11 GiB of 10 GiB (110 %)"
    assert shown.percent == 100.0 and shown.level == "critical"
    assert shown.note == "hard limit 12 GiB, grace 6days"


def test_a_figure_without_limit_has_no_bar() -> None:
    shown = figure_view(QuotaFigures(12034), is_space=False)
    assert shown.text == "12,034 used, no limit" and shown.percent is None
