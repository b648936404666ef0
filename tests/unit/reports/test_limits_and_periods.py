"""Run-out projection, report periods, sorting and CSV safety."""

from __future__ import annotations

import csv
import io
from datetime import date

from app.reports.csv_export import write_csv
from app.reports.limits import runs_out_on
from app.reports.usage import Figures, period_labels, sort_totals

TODAY = date(2026, 11, 22)


def test_projection_divides_what_is_left_by_the_recent_daily_rate() -> None:
    # 1000 left at 100 a day (700 over 7 days) -> 10 days.
    assert runs_out_on(5000, 4000, 700, 7, TODAY) == date(2026, 12, 2)


def test_projection_is_today_when_already_over_and_none_when_idle() -> None:
    assert runs_out_on(100, 150, 10, 7, TODAY) == TODAY
    assert runs_out_on(100, 50, 0, 7, TODAY) is None


def test_weeks_start_on_monday_and_months_on_the_first() -> None:
    assert period_labels(date(2026, 11, 18), date(2026, 11, 30), "week") == [
        "2026-11-16",
        "2026-11-23",
        "2026-11-30",
    ]
    assert period_labels(date(2026, 11, 18), date(2027, 1, 2), "month") == [
        "2026-11-01",
        "2026-12-01",
        "2027-01-01",
    ]
    assert len(period_labels(date(2026, 11, 1), date(2026, 11, 30), "day")) == 30


def test_totals_sort_by_metric_then_name() -> None:
    totals = [("b", Figures(cpu_hours=1)), ("a", Figures(cpu_hours=5)), ("c", Figures())]
    assert [g for g, _ in sort_totals(totals, "cpu_hours", True)] == ["a", "b", "c"]
    assert [g for g, _ in sort_totals(totals, "group", False)] == ["a", "b", "c"]


def test_csv_cells_that_a_spreadsheet_would_run_are_defused() -> None:
    text = write_csv(("group", "cpu"), [("=HYPERLINK(1)", 1.5), ("physics", 2)])
    assert list(csv.reader(io.StringIO(text))) == [
        ["group", "cpu"],
        ["'=HYPERLINK(1)", "1.5"],
        ["physics", "2"],
    ]
