"""Poll-cycle cost with 10,000 tracked jobs: scheduler calls, cycle time, memory.

A held array of 10,000 tasks is submitted as alice and one row per task (plus the parent) is
inserted into a fresh PostgreSQL database, then a few cycles run against the real cluster.
Then 1,000 held jobs are submitted as alice with plain sbatch, outside the portal, and the
same cycles run again: the first records them, the next ones track 11,001 rows. Everything
is cancelled at the end. Run: .venv/bin/python bench/bench_poller.py
"""

from __future__ import annotations

import asyncio
import logging
import os
import resource
import subprocess
import time
import tracemalloc
import uuid

import psycopg
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.db import create_engine, create_sessionmaker, migrate_to_head
from app.models.jobs import Job
from app.models.projects import Membership, Project
from app.models.users import User, UserClusterAccount
from app.poller.cycle import poll_cluster_once
from app.scheduler.base import SchedulerAdapter
from app.scheduler.config import load_clusters
from app.scheduler.registry import build_adapter

CLUSTER = "testcluster"
CLUSTERS_FILE = os.environ.get("PORTAL_CLUSTERS_FILE", "/var/lib/hpcportal-dev/clusters.toml")
BENCH_DB_URL = os.environ.get(
    "PORTAL_BENCH_PG_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/hpcportal_bench_jobs"
)
TASKS = 10_000
OUTSIDE = 1_000
OUTSIDE_NAME = "bench-outside"


def fresh_database(url: str = BENCH_DB_URL) -> str:
    name = make_url(url).database
    admin = make_url(url).set(drivername="postgresql", database="postgres")
    with psycopg.connect(admin.render_as_string(hide_password=False), autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')
    migrate_to_head(url)
    return url


async def alice_in_physics(
    sessionmaker: async_sessionmaker[AsyncSession],
    cluster: str = CLUSTER,
    account: str = "physics",
) -> tuple[User, Project]:
    """alice, a member of a project charging ``account`` on ``cluster``."""
    async with sessionmaker() as session:
        project = Project(name=account.title(), slurm_account=account, cluster=cluster)
        alice = User(login="alice", display_name="Alice")
        alice.cluster_accounts.append(UserClusterAccount(cluster=cluster, username="alice"))
        session.add_all([project, alice])
        await session.flush()
        session.add(Membership(user_id=alice.id, project_id=project.id, role="member"))
        await session.commit()
        return alice, project


def run_as_alice(*argv: str) -> str:
    command = ["runuser", "-u", "alice", "--", *argv]
    return subprocess.run(command, capture_output=True, text=True, check=True).stdout


def task_row(parent: Job, task: int) -> Job:
    return Job(
        uuid=str(uuid.uuid4()),
        owner_user_id=parent.owner_user_id,
        project_id=parent.project_id,
        cluster=CLUSTER,
        script=parent.script,
        name=parent.name,
        state="held",
        slurm_job_id=f"{parent.slurm_job_id}_{task}",
        array_parent_id=parent.id,
        array_task_id=task,
    )


async def insert_rows(
    sessionmaker: async_sessionmaker[AsyncSession], alice: User, project: Project, array_id: str
) -> None:
    async with sessionmaker() as session:
        parent = Job(
            uuid=str(uuid.uuid4()),
            owner_user_id=alice.id,
            project_id=project.id,
            cluster=CLUSTER,
            script="#!/bin/sh\ntrue\n",
            name="bench-array",
            state="held",
            slurm_job_id=array_id,
            array_spec=f"0-{TASKS - 1}",
        )
        session.add(parent)
        await session.flush()
        session.add_all([task_row(parent, task) for task in range(TASKS)])
        await session.commit()


async def timed_cycle(
    sessionmaker: async_sessionmaker[AsyncSession], adapter: SchedulerAdapter, label: str
) -> float:
    started = time.perf_counter()
    result = await poll_cluster_once(sessionmaker, CLUSTER, adapter)
    seconds = time.perf_counter() - started
    print(
        f"{label}: tracked={result.tracked} scheduler_calls={result.calls} "
        f"transitions={result.transitions} ok={result.is_ok} time={seconds:.2f}s"
    )
    return seconds


def submit_outside(count: int) -> None:
    """``count`` held jobs as alice with plain sbatch, as someone on a login node would."""
    loop = (
        f"for i in $(seq {count}); do sbatch --hold --account=physics --chdir=/tmp "
        f"--output=/dev/null --job-name={OUTSIDE_NAME} --wrap=true >/dev/null || exit 1; done"
    )
    run_as_alice("bash", "-c", loop)


async def measure(sessionmaker: async_sessionmaker[AsyncSession], cycles: int) -> None:
    adapter = build_adapter(load_clusters(CLUSTERS_FILE)[CLUSTER], "ssh")
    try:
        baseline = [
            await timed_cycle(sessionmaker, adapter, f"cycle {cycle}")
            for cycle in range(1, cycles + 1)
        ]
        submit_outside(OUTSIDE)
        first = await timed_cycle(sessionmaker, adapter, f"cycle recording {OUTSIDE} outside")
        after = [
            await timed_cycle(sessionmaker, adapter, f"cycle {cycle} with outside jobs")
            for cycle in range(1, cycles + 1)
        ]
        steady = sorted(baseline)[len(baseline) // 2]
        print(
            f"time ratio, recording cycle / plain cycle: {first / steady:.2f}; "
            f"later cycles / plain cycle: {sorted(after)[len(after) // 2] / steady:.2f}"
        )
        # Tracing slows Python down several times over, so memory is measured on its own cycle.
        tracemalloc.start()
        await timed_cycle(sessionmaker, adapter, "cycle under tracemalloc")
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    finally:
        await adapter.close()
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"python heap peak during one cycle {peak / 2**20:.1f} MiB; max RSS {rss_mb:.0f} MiB")


async def main() -> None:
    engine = create_engine(fresh_database())
    sessionmaker = create_sessionmaker(engine)
    alice, project = await alice_in_physics(sessionmaker)
    array_id = (
        run_as_alice(
            "sbatch",
            "--parsable",
            f"--array=0-{TASKS - 1}",
            "--hold",
            "--account=physics",
            "--chdir=/tmp",
            "--output=/dev/null",
            "--wrap=true",
        )
        .strip()
        .split(";")[0]
    )
    try:
        await insert_rows(sessionmaker, alice, project, array_id)
        await measure(sessionmaker, cycles=3)
    finally:
        subprocess.run(["scancel", array_id], check=False)  # noqa: ASYNC221
        subprocess.run(["scancel", f"--name={OUTSIDE_NAME}"], check=False)  # noqa: ASYNC221
        await engine.dispose()


if __name__ == "__main__":
    # Only the figures: the portal and httpx log every request at INFO.
    logging.basicConfig(level=logging.WARNING)
    asyncio.run(main())
