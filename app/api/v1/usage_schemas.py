"""Bodies of GET /api/v1/usage, built from the report service's own figures."""

from __future__ import annotations

from datetime import date

from pydantic import BaseModel, ConfigDict, Field

from app.reports.usage import Figures, UsageReport


class FiguresOut(BaseModel):
    cpu_hours: float
    gpu_hours: float
    mem_gb_hours: float = Field(description="Memory allocated, in GB-hours.")
    jobs_total: int
    jobs_completed: int
    jobs_failed: int
    jobs_cancelled: int
    jobs_timeout: int
    jobs_other: int


class UsageCellOut(FiguresOut):
    group: str
    period: str = Field(description="First day of the period (YYYY-MM-DD).")


class UsageTotalOut(FiguresOut):
    group: str


class UsageOut(BaseModel):
    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "start": "2026-01-01",
                    "end": "2026-01-31",
                    "group_by": "project",
                    "period": "week",
                    "periods": ["2025-12-29", "2026-01-05"],
                    "cells": [{"group": "physics", "period": "2026-01-05", "cpu_hours": 12.5}],
                    "totals": [{"group": "physics", "cpu_hours": 12.5}],
                    "grand_total": {"cpu_hours": 12.5},
                }
            ]
        }
    )

    start: date
    end: date
    group_by: str
    period: str
    periods: list[str] = Field(description="Every period in the range, empty ones included.")
    cells: list[UsageCellOut] = Field(description="Figures per group and period.")
    totals: list[UsageTotalOut] = Field(description="Per group over the range, sorted.")
    grand_total: FiguresOut


def _figures(figures: Figures) -> dict[str, float | int]:
    return {name: getattr(figures, name) for name in FiguresOut.model_fields}


def usage_out(report: UsageReport) -> UsageOut:
    query = report.query
    return UsageOut(
        start=query.start,
        end=query.end,
        group_by=query.group_by,
        period=query.period,
        periods=report.periods,
        cells=[
            UsageCellOut(group=c.group, period=c.period, **_figures(c.figures))
            for c in report.cells
        ],
        totals=[UsageTotalOut(group=g, **_figures(f)) for g, f in report.totals],
        grand_total=FiguresOut(**_figures(report.grand_total)),
    )
