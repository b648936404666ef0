"""Server time of the job history and job detail pages over millions of jobs in PostgreSQL.

    .venv/bin/python bench/bench_pages.py [--jobs 10000000] [--requests 200] [--reuse]

Builds (or reuses, with --reuse) the database ``hpcportal_bench`` on the PostgreSQL server
of ``PORTAL_TEST_PG_URL``: 50 users in 10 projects, the jobs bulk-loaded with COPY (about 1 %
still active, 1,000 array jobs of 10 tasks, three state events for the newest 200,000 jobs).
Then it signs in as one user and times requests made in-process through ASGI, so the figures
are the server's own time (routing, authentication, queries, rendering), not the network's.
Prints p50/p95/max per page, and first the API tokens page (same layout, reads no job) as
the baseline of the same run: sign-in, middleware and rendering without the job queries. The
target is p95 < 50 ms. The default 1,000,000 jobs load in minutes; 10,000,000 in about
half an hour.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import random
import statistics
import time
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import psycopg
from sqlalchemy.engine import make_url

from app.config import Settings
from app.db import create_engine, create_sessionmaker, migrate_to_head
from app.main import create_app
from app.security import hash_password

USERS, PROJECTS, ARRAYS, TASKS = 50, 10, 1000, 10
EVENTS_FOR_NEWEST = 200_000
TARGET_MS = 50
PASSWORD = "bench-password"
FINAL = (
    ["completed"] * 80
    + ["failed"] * 8
    + ["cancelled"] * 6
    + ["timeout"] * 4
    + ["out_of_memory"] * 2
)
JOB_COLUMNS = (
    "uuid, owner_user_id, project_id, cluster, parameters, script, slurm_job_id, "
    "array_parent_id, array_task_id, array_spec, name, state, reason, exit_code, "
    "submitted_at, started_at, ended_at, partition, time_limit_minutes, cpus, memory_mb, "
    "elapsed_seconds, total_cpu_seconds, max_rss_bytes, alloc_cpus, stdout_path, "
    "created_at, updated_at"
)


def bench_url() -> str:
    server = os.environ.get("PORTAL_TEST_PG_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/x")
    url = make_url(server).set(database="hpcportal_bench")
    return url.render_as_string(hide_password=False)


def libpq_conninfo(database_url: str, database: str | None = None) -> str:
    url = make_url(database_url).set(drivername="postgresql")
    return url.set(database=database or url.database).render_as_string(hide_password=False)


def recreate_database(database_url: str) -> None:
    with psycopg.connect(libpq_conninfo(database_url, "postgres"), autocommit=True) as conn:
        conn.execute("DROP DATABASE IF EXISTS hpcportal_bench WITH (FORCE)")
        conn.execute("CREATE DATABASE hpcportal_bench")


def _people(conn: psycopg.Connection[Any]) -> None:
    password = hash_password(PASSWORD)
    with conn.cursor() as cur:
        for number in range(1, PROJECTS + 1):
            cur.execute(
                "INSERT INTO projects (name, slurm_account, cluster, description, is_active,"
                " created_at) VALUES (%s, %s, 'testcluster', '', true, now())",
                (f"project{number}", f"acct{number}"),
            )
        for number in range(1, USERS + 1):
            cur.execute(
                "INSERT INTO users (login, display_name, email, password_hash, is_site_admin,"
                " is_active, created_at) VALUES (%s, %s, %s, %s, false, true, now())",
                (f"user{number}", f"User {number}", f"user{number}@example.org", password),
            )
            cur.execute(
                "INSERT INTO user_cluster_accounts (user_id, cluster, username)"
                " VALUES (%s, 'testcluster', %s)",
                (number, f"user{number}"),
            )
            project = (number - 1) % PROJECTS + 1
            cur.execute(
                "INSERT INTO memberships (user_id, project_id, role) VALUES (%s, %s, %s)",
                (number, project, "manager" if number <= PROJECTS else "member"),
            )


def _job_row(index: int, total: int, rng: random.Random, start: datetime) -> tuple[Any, ...]:
    job_id = index + 1
    owner = rng.randint(1, USERS)
    project = (owner - 1) % PROJECTS + 1
    created = start + timedelta(seconds=index * 30)
    is_recent = index > total - total // 100
    state = rng.choice(["pending", "running"]) if is_recent else rng.choice(FINAL)
    array_spec = parent = task = None
    if index % (total // ARRAYS) == 0 and index + TASKS < total:
        array_spec = f"1-{TASKS}"
    elif 0 < index % (total // ARRAYS) <= TASKS:
        parent, task = job_id - index % (total // ARRAYS), index % (total // ARRAYS)
    elapsed = rng.randint(60, 7200)
    return (
        str(uuid.UUID(int=rng.getrandbits(128))), owner, project, "testcluster", "{}",
        "#!/bin/bash\nsrun ./simulate\n", str(100000 + job_id), parent, task, array_spec,
        f"sim-{rng.choice(['relax', 'prod', 'scf', 'md'])}-{job_id}", state,
        "Priority" if state == "pending" else None, 0 if state == "completed" else 1,
        created, created + timedelta(seconds=20), created + timedelta(seconds=20 + elapsed),
        "debug", 120, 4, 4000, elapsed, elapsed * 3, rng.randint(1, 4000) * 2**20, 4,
        f"/home/user{owner}/sim-%j.out", created, created,
    )  # fmt: skip


def _jobs(total: int) -> Iterator[tuple[Any, ...]]:
    rng = random.Random(7)
    start = datetime.now(UTC) - timedelta(seconds=total * 30)
    for index in range(total):
        yield _job_row(index, total, rng, start)


def _load(total: int) -> None:
    url = bench_url()
    recreate_database(url)
    migrate_to_head(url)
    started = time.perf_counter()
    with psycopg.connect(libpq_conninfo(url)) as conn:
        _people(conn)
        with conn.cursor() as cur, cur.copy(f"COPY jobs ({JOB_COLUMNS}) FROM STDIN") as copy:
            for row in _jobs(total):
                copy.write_row(row)
        with conn.cursor() as cur:
            cur.execute(
                "INSERT INTO job_events (job_id, at, from_state, to_state, reason, source)"
                " SELECT j.id, j.created_at + e.offset_s * interval '1 second', e.from_s, e.to_s,"
                " NULL, 'poller' FROM jobs j CROSS JOIN (VALUES (0, NULL, 'pending'),"
                " (20, 'pending', 'running'), (40, 'running', 'completed'))"
                " AS e(offset_s, from_s, to_s) WHERE j.id > %s",
                (total - EVENTS_FOR_NEWEST,),
            )
        conn.execute("ANALYZE")
    print(f"loaded {total:,} jobs in {time.perf_counter() - started:.1f} s")


async def _time(client: httpx.AsyncClient, url: str, count: int) -> list[float]:
    await client.get(url)  # warm caches and prepared statements
    samples = []
    for _ in range(count):
        started = time.perf_counter()
        response = await client.get(url)
        samples.append((time.perf_counter() - started) * 1000)
        assert response.status_code == 200, (url, response.status_code)
    return samples


def _report(name: str, samples: list[float]) -> None:
    ordered = sorted(samples)
    p95 = ordered[int(len(ordered) * 0.95) - 1]
    verdict = "ok" if p95 < TARGET_MS else "OVER TARGET"
    print(
        f"{name:<34} p50 {statistics.median(ordered):6.1f} ms  p95 {p95:6.1f} ms"
        f"  max {ordered[-1]:6.1f} ms  ({verdict})"
    )


async def _measure(total: int, count: int) -> None:
    settings = Settings(env="dev", database_url=bench_url(), run_poller_in_web=False)
    app = create_app(settings)
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://bench") as client:
            form = await client.get("/signin")
            token = form.text.split('name="csrf_token" value="', 1)[1].split('"', 1)[0]
            await client.post(
                "/signin", data={"login": "user1", "password": PASSWORD, "csrf_token": token}
            )
            deep = total // 2
            detail = await _visible_job(settings.database_url, total)
            pages = {
                "baseline: tokens page, no job read": "/settings/tokens",
                "history, first page": "/jobs",
                "history, filtered (failed+project)": "/jobs?state=failed&project=1",
                f"history, deep keyset (before={deep})": f"/jobs?before={deep}",
                "history, text search": "/jobs?q=prod-99",
                "history, search matching nothing": "/jobs?q=no-such-name",
                "job detail": f"/jobs/{detail}",
            }
            for name, url in pages.items():
                _report(name, await _time(client, url, count))


async def _visible_job(database_url: str, total: int) -> int:
    engine = create_engine(database_url)
    maker = create_sessionmaker(engine)
    from sqlalchemy import select

    from app.models.jobs import Job

    async with maker() as session:
        query = select(Job.id).where(Job.owner_user_id == 1, Job.id > total - 1000)
        job_id = (await session.execute(query.limit(1))).scalar_one()
    await engine.dispose()
    return int(job_id)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=1_000_000)
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--reuse", action="store_true", help="keep the loaded database")
    args = parser.parse_args()
    if not args.reuse:
        _load(args.jobs)
    asyncio.run(_measure(args.jobs, args.requests))


if __name__ == "__main__":
    # Only the figures: the portal and httpx log every request at INFO.
    logging.basicConfig(level=logging.WARNING)
    main()
