"""Turning the scheduler's accounting records into ``accounting_jobs`` rows (pure)."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, date, datetime
from typing import Any

from app.scheduler.slurm.parsing import parse_size
from app.scheduler.types import JobInfo

MB = 1024 * 1024
# Part of the key, so never null; a record without a submit time is still one job.
NEVER = datetime(1970, 1, 1, tzinfo=UTC)


def _mb(value: int | None) -> int | None:
    return None if value is None else round(value / MB)


def _req_mem_mb(info: JobInfo) -> int | None:
    text = info.native.get("ReqMem")
    try:
        return _mb(parse_size(text if isinstance(text, str) else None, "M"))
    except ValueError:
        return None


def accounting_row(cluster: str, info: JobInfo) -> dict[str, Any]:
    """The column values for one job; missing allocations count as zero, never as unknown."""
    limit = info.time_limit
    return {
        "cluster": cluster,
        "job_id": info.job_id,
        "array_job_id": info.array_job_id,
        "array_task_id": info.array_task_id,
        "name": (info.name or "")[:200] or None,
        "user_name": info.user,
        "account": info.account,
        "partition": info.partition,
        "state": info.state.value,
        "native_state": info.native_state[:64],
        "exit_code": info.exit_code,
        "signal": info.signal,
        "submit_time": info.submit_time or NEVER,
        "start_time": info.start_time,
        "end_time": info.end_time,
        "elapsed_seconds": info.elapsed_seconds or 0,
        "alloc_cpus": info.alloc.cpus or 0,
        "alloc_mem_mb": _mb(info.alloc.memory_bytes) or 0,
        "alloc_gpus": info.alloc.gpus or 0,
        "total_cpu_seconds": info.total_cpu_seconds,
        "max_rss_mb": _mb(info.max_rss_bytes),
        "req_mem_mb": _req_mem_mb(info),
        "time_limit_seconds": None if limit is None else int(limit.total_seconds()),
    }


def rows_for_accounts(
    cluster: str, infos: Iterable[JobInfo], accounts: set[str]
) -> list[dict[str, Any]]:
    """Rows for the jobs charged to one of ``accounts``; the last record of a job wins."""
    rows: dict[tuple[str, datetime], dict[str, Any]] = {}
    for info in infos:
        if info.account in accounts:
            row = accounting_row(cluster, info)
            rows[(row["job_id"], row["submit_time"])] = row
    return list(rows.values())


def days_touched(rows: Iterable[dict[str, Any]]) -> set[date]:
    """The UTC days on which the given jobs ended: the rollups to rebuild."""
    ends: Iterable[datetime] = (row["end_time"] for row in rows if row["end_time"] is not None)
    return {end.date() for end in ends}
