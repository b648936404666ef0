"""State-change-to-database latency with the poller running, and submit throughput.

50 short jobs are submitted through the jobs service while ``run_poller`` runs at its
configured interval (PORTAL_POLL_INTERVAL, default 10 s). For every job the moment Slurm
started and ended it (sacct, whole seconds) is compared with the time its running/terminal
event reached the database. Then 50 held jobs go through the service and 50 through raw
``sbatch`` (as alice, same machine) to compare submit throughput; those are cancelled.
Run: .venv/bin/python bench/bench_latency.py
"""

from __future__ import annotations

import asyncio
import logging
import os
import statistics
import subprocess
import time
from datetime import UTC, datetime

from bench_poller import (
    CLUSTER,
    CLUSTERS_FILE,
    alice_in_physics,
    fresh_database,
    run_as_alice,
)
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.config import Settings
from app.db import create_engine, create_sessionmaker
from app.jobs import states
from app.jobs.requests import JobRequest
from app.jobs.service import JobService
from app.models.jobs import Job, JobEvent
from app.models.projects import Project
from app.poller.runner import run_poller
from app.scheduler.config import load_clusters
from app.scheduler.registry import build_adapter
from app.users.actor import Actor
from app.users.service import actor_for

JOBS = 50
INTERVAL = float(os.environ.get("PORTAL_POLL_INTERVAL", "10"))


def request(project: Project, *, script: str = "#!/bin/bash\nsleep 1\n") -> JobRequest:
    return JobRequest(
        project_id=project.id,
        script=script,
        name="latency",
        time_limit_minutes=2,
        memory_mb=50,
        stdout_path="/scratch/alice/bench-%j.out",
    )


def slurm_times(slurm_ids: list[str]) -> dict[str, tuple[datetime, datetime]]:
    output = subprocess.run(
        [
            "env",
            "TZ=UTC",
            "sacct",
            "-X",
            "-n",
            "-P",
            "-a",
            "-j",
            ",".join(slurm_ids),
            "-o",
            "JobID,Start,End",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    times = {}
    for line in output.splitlines():
        job_id, start, end = line.split("|")
        parse = datetime.fromisoformat
        times[job_id] = (parse(start).replace(tzinfo=UTC), parse(end).replace(tzinfo=UTC))
    return times


async def event_times(
    sessionmaker: async_sessionmaker[AsyncSession],
) -> dict[str, dict[str, datetime]]:
    async with sessionmaker() as session:
        rows = await session.execute(
            select(Job.slurm_job_id, JobEvent.to_state, JobEvent.at).join(Job)
        )
        found: dict[str, dict[str, datetime]] = {}
        for slurm_id, to_state, at in rows:
            found.setdefault(slurm_id or "", {})[to_state] = at
        return found


async def wait_all_terminal(sessionmaker: async_sessionmaker[AsyncSession], ids: list[int]) -> None:
    while True:
        async with sessionmaker() as session:
            rows = await session.scalars(select(Job.state).where(Job.id.in_(ids)))
            if all(states.is_terminal(state) for state in rows):
                return
        await asyncio.sleep(1)


def percentiles(values: list[float]) -> str:
    cut = statistics.quantiles(values, n=20, method="inclusive")
    return f"p50 {statistics.median(values):.2f}s p95 {cut[18]:.2f}s max {max(values):.2f}s"


async def latency(
    service: JobService,
    sessionmaker: async_sessionmaker[AsyncSession],
    alice: Actor,
    project: Project,
) -> None:
    jobs = [await service.submit(alice, request(project)) for _ in range(JOBS)]
    await wait_all_terminal(sessionmaker, [job.id for job in jobs])
    slurm = slurm_times([job.slurm_job_id or "" for job in jobs])
    events = await event_times(sessionmaker)
    start_lag, end_lag = [], []
    for slurm_id, (started, ended) in slurm.items():
        seen = events.get(slurm_id, {})
        if "running" in seen:
            start_lag.append((seen["running"] - started).total_seconds())
        terminal = [at for state, at in seen.items() if states.is_terminal(state)]
        end_lag.append((terminal[0] - ended).total_seconds())
    print(f"poll interval {INTERVAL:.0f}s, {JOBS} jobs of `sleep 1`")
    print(f"  start -> running in DB ({len(start_lag)} seen running): {percentiles(start_lag)}")
    print(f"  end -> terminal in DB: {percentiles(end_lag)}")


async def throughput(service: JobService, alice: Actor, project: Project) -> None:
    held = "#!/bin/bash\n#SBATCH --hold\ntrue\n"
    started = time.perf_counter()
    submitted = [await service.submit(alice, request(project, script=held)) for _ in range(JOBS)]
    service_rate = JOBS / (time.perf_counter() - started)
    started = time.perf_counter()
    raw = [
        run_as_alice(
            "sbatch",
            "--parsable",
            "--hold",
            "--account=physics",
            "--chdir=/tmp",
            "--output=/dev/null",
            "--wrap=true",
        ).strip()
        for _ in range(JOBS)
    ]
    raw_rate = JOBS / (time.perf_counter() - started)
    ids = [job.slurm_job_id or "" for job in submitted] + raw
    subprocess.run(["scancel", *ids], check=False)  # noqa: ASYNC221
    print(
        f"submit throughput: service {service_rate:.1f} jobs/s "
        f"(two-phase + preflight over SSH), raw runuser sbatch {raw_rate:.1f} jobs/s"
    )


async def main() -> None:
    url = fresh_database()
    engine = create_engine(url)
    sessionmaker = create_sessionmaker(engine)
    adapter = build_adapter(load_clusters(CLUSTERS_FILE)[CLUSTER], "ssh")
    user, project = await alice_in_physics(sessionmaker)
    async with sessionmaker() as session:
        alice = await actor_for(session, user)
    service = JobService(sessionmaker, {CLUSTER: adapter})
    stop = asyncio.Event()
    settings = Settings(database_url=url, poll_interval=INTERVAL)
    poller = asyncio.create_task(run_poller(settings, sessionmaker, {CLUSTER: adapter}, stop))
    try:
        await latency(service, sessionmaker, alice, project)
        await throughput(service, alice, project)
    finally:
        stop.set()
        await poller
        await adapter.close()
        await engine.dispose()


if __name__ == "__main__":
    # Only the figures: the portal and httpx log every request at INFO.
    logging.basicConfig(level=logging.WARNING)
    asyncio.run(main())
