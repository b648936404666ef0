"""Accounting rows built from sacct output recorded on the development cluster."""

from __future__ import annotations

from pathlib import Path

from app.reports.records import days_touched, rows_for_accounts
from app.scheduler.slurm.parsing import parse_sacct

FIXTURE = Path(__file__).parents[2] / "fixtures" / "slurm" / "22.05" / "sacct.txt"


def test_rows_keep_only_the_portal_accounts_and_fold_steps() -> None:
    infos = parse_sacct(FIXTURE.read_text())
    # Looked up by job name: the recording is refreshed from the cluster, so ids change.
    rows = {row["name"]: row for row in rows_for_accounts("testcluster", infos, {"physics"})}
    assert "bobjob" not in rows
    hello = rows["hello"]
    assert (hello["alloc_cpus"], hello["elapsed_seconds"], hello["req_mem_mb"]) == (1, 8, 100)
    assert hello["max_rss_mb"] == 4  # 4544K from the batch step, to the nearest MB
    assert hello["time_limit_seconds"] == 600
    assert rows["exit3"]["exit_code"] == 3
    assert rows["held"]["end_time"] is None
    assert {day.isoformat() for day in days_touched(rows.values())} == {"2026-11-23"}
