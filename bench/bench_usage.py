"""Usage report and ingestion figures on PostgreSQL (database hpcportal_bench_usage).

1. 1,000,000 generated finished jobs in accounting_jobs (server-side generate_series),
   rolled up day by day with the ingestion's own rebuild, then the usage report timed.
2. One day of 50,000 jobs as generated sacct text, through the adapter's parser, the
   account filter, the upsert and the rollup: one accounting call per cycle.

Run: PYTHONPATH=. .venv/bin/python bench/bench_usage.py
"""

from __future__ import annotations

import asyncio
import logging
import statistics
import time
from collections.abc import Sequence
from datetime import UTC, date, datetime, timedelta

from sqlalchemy import text

from app.db import create_engine, create_sessionmaker, migrate_to_head, unit_of_work
from app.models.projects import Project
from app.reports import repository
from app.reports.ingest import ingest_cycle
from app.reports.usage import UsageQuery, usage_report
from app.scheduler.slurm.commands import SACCT_FIELDS, SEP
from app.scheduler.slurm.parsing import parse_sacct
from app.scheduler.types import JobInfo
from app.users.actor import Actor
from tests.conftest import recreate_postgres_database

URL = "postgresql+psycopg://postgres@127.0.0.1:5432/hpcportal_bench_usage"
CLUSTER = "benchcluster"
JOBS, DAYS, ACCOUNTS, USERS = 1_000_000, 365, 40, 400
FIRST_DAY = date(2025, 11, 1)

GENERATE = f"""
INSERT INTO accounting_jobs (cluster, job_id, user_name, account, partition, state,
  native_state, submit_time, start_time, end_time, elapsed_seconds, alloc_cpus, alloc_mem_mb,
  alloc_gpus, total_cpu_seconds, max_rss_mb, req_mem_mb, time_limit_seconds, ingested_at)
SELECT '{CLUSTER}', g::text, 'user' || (g % {USERS}), 'acct' || (g % {ACCOUNTS}),
  CASE WHEN g % 3 = 0 THEN 'long' ELSE 'debug' END,
  (ARRAY['completed','failed','cancelled','timeout'])[1 + g % 4], 'X',
  e - interval '2 hours', e - interval '1 hour', e, 600 + g % 7200, 1 + g % 16,
  1024 * (1 + g % 8), CASE WHEN g % 5 = 0 THEN 1 ELSE 0 END,
  (g % 7200) * 0.5, 100 + g % 900, 4096, 86400, now()
FROM (SELECT g, timestamptz '{FIRST_DAY.isoformat()}T00:00:00Z'
             + (g % {DAYS}) * interval '1 day' + (g % 86000) * interval '1 second' AS e
      FROM generate_series(1, {JOBS}) AS g) AS s
"""


def percentile(values: Sequence[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * fraction))]


async def build_rollups(sessionmaker: object) -> float:
    started = time.perf_counter()
    async with unit_of_work(sessionmaker) as session:  # type: ignore[arg-type]
        await session.execute(text(GENERATE))
        days = [FIRST_DAY + timedelta(days=i) for i in range(DAYS)]
        await repository.rebuild_days(session, CLUSTER, days, datetime.now(UTC))
        for i in range(ACCOUNTS):
            session.add(Project(name=f"Project {i}", slurm_account=f"acct{i}", cluster=CLUSTER))
    return time.perf_counter() - started


async def time_reports(sessionmaker: object) -> list[float]:
    admin = Actor(user_id=0, login="bench", is_site_admin=True)
    queries = [
        UsageQuery(FIRST_DAY, FIRST_DAY + timedelta(days=DAYS - 1), group, period)
        for group in ("project", "user", "partition")
        for period in ("day", "week", "month")
    ]
    timings = []
    for _round in range(6):
        for query in queries:
            async with sessionmaker() as session:  # type: ignore[operator]
                started = time.perf_counter()
                await usage_report(session, admin, query)
                timings.append((time.perf_counter() - started) * 1000)
    return timings


def sacct_text(count: int, day: date) -> str:
    lines = []
    for i in range(count):
        end = datetime.combine(day, datetime.min.time()) + timedelta(seconds=i % 86000)
        stamp = end.strftime("%Y-%m-%dT%H:%M:%S")
        values = {
            "JobID": str(5_000_000 + i),
            "JobIDRaw": str(5_000_000 + i),
            "JobName": "gen",
            "State": "COMPLETED",
            "ExitCode": "0:0",
            "Reason": "None",
            "Submit": stamp,
            "Start": stamp,
            "End": stamp,
            "ElapsedRaw": str(60 + i % 600),
            "TotalCPU": "00:30.000",
            "MaxRSS": "",
            "AllocTRES": f"cpu={1 + i % 4},mem=1000M",
            "ReqMem": "1000M",
            "Timelimit": "01:00:00",
            "Account": f"acct{i % ACCOUNTS}",
            "User": f"user{i % USERS}",
            "Partition": "debug",
            "NodeList": "n1",
            "WorkDir": "/tmp",
            "Comment": "",
            "QOS": "normal",
            "Priority": "1",
        }
        lines.append(SEP.join(values[field] for field in SACCT_FIELDS))
    return "\n".join(lines)


class RecordedAccounting:
    """Answers accounting calls from generated sacct text, counting the calls."""

    def __init__(self, output: str) -> None:
        self.output = output
        self.calls = 0

    async def accounting(self, job_ids: object = None, since: object = None) -> list[JobInfo]:
        self.calls += 1
        return parse_sacct(self.output)


async def time_ingestion(sessionmaker: object) -> tuple[float, int, int]:
    day = date(2026, 11, 1)
    adapter = RecordedAccounting(sacct_text(50_000, day))
    started = time.perf_counter()
    result = await ingest_cycle(
        sessionmaker,  # type: ignore[arg-type]
        adapter,  # type: ignore[arg-type]
        CLUSTER,
        now=datetime(2026, 11, 2, tzinfo=UTC),
        first_since=datetime(2026, 11, 1, tzinfo=UTC),
    )
    return time.perf_counter() - started, adapter.calls, result.stored


async def main() -> None:
    recreate_postgres_database(URL)
    migrate_to_head(URL)
    engine = create_engine(URL)
    sessionmaker = create_sessionmaker(engine)
    try:
        build = await build_rollups(sessionmaker)
        async with sessionmaker() as session:
            rollups = await session.scalar(text("SELECT count(*) FROM usage_daily"))
        print(f"generated {JOBS:,} jobs and {rollups:,} daily rollup rows in {build:.1f} s")
        timings = await time_reports(sessionmaker)
        print(
            f"usage report over {DAYS} days, {len(timings)} runs: "
            f"median {statistics.median(timings):.1f} ms, p95 {percentile(timings, 0.95):.1f} ms, "
            f"max {max(timings):.1f} ms"
        )
        seconds, calls, stored = await time_ingestion(sessionmaker)
        print(
            f"ingestion of one day with {stored:,} jobs (generated sacct text through the "
            f"parser, upsert and rollup): {seconds:.2f} s, {calls} scheduler call(s)"
        )
    finally:
        await engine.dispose()


if __name__ == "__main__":
    # Only the figures: the portal and httpx log every request at INFO.
    logging.basicConfig(level=logging.WARNING)
    asyncio.run(main())
