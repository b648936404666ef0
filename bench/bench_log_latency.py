"""Time from a line written to a job's log to the line arriving at a live-tail (SSE) client.

    .venv/bin/python bench/bench_log_latency.py [--lines 40] [--every 0.5]

Needs the local cluster (``scripts/dev-cluster up``). Submits, as ``alice``, a job that
prints ``<epoch seconds> line N`` every ``--every`` seconds; serves the portal with uvicorn on
a free port (SQLite in a temporary directory); signs in and follows
``/jobs/{id}/logs/stdout/stream``; for every line received, latency = arrival time minus
the time written in the line (same machine, same clock). Prints p50/p95/max; the target is
p95 < 1 s.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import statistics
import tempfile
import time
from pathlib import Path

import httpx
import uvicorn
from portal_process import free_port

from app.config import Settings
from app.db import create_engine, create_sessionmaker, migrate_to_head, unit_of_work
from app.main import create_app
from app.models.jobs import Job
from app.models.projects import Membership, Project
from app.models.users import User, UserClusterAccount
from app.scheduler.config import load_clusters
from app.scheduler.registry import build_adapter
from app.scheduler.types import JobSpec
from app.security import hash_password

CLUSTERS_FILE = os.environ.get("PORTAL_CLUSTERS_FILE", "/var/lib/hpcportal-dev/clusters.toml")
PASSWORD = "latency-bench"
SCRIPT = (
    "#!/bin/bash\nfor i in $(seq 1 {lines}); do "
    'echo "$(date +%s.%N) line $i"; sleep {every}; done\n'
)


async def _submit(lines: int, every: float) -> str:
    adapter = build_adapter(load_clusters(CLUSTERS_FILE)["testcluster"], "ssh")
    spec = JobSpec(
        script=SCRIPT.format(lines=lines, every=every),
        name="latency-bench",
        account="physics",
        time_limit=10,
        memory_mb=100,
        stdout="/scratch/alice/latency-bench-%j.out",
    )
    try:
        return await adapter.submit(spec, "alice")
    finally:
        await adapter.close()


async def _arrange(database_url: str, slurm_id: str) -> int:
    engine = create_engine(database_url)
    async with unit_of_work(create_sessionmaker(engine)) as session:
        user = User(login="alice", display_name="Alice", password_hash=hash_password(PASSWORD))
        user.cluster_accounts.append(UserClusterAccount(cluster="testcluster", username="alice"))
        project = Project(name="physics", slurm_account="physics", cluster="testcluster")
        session.add_all([user, project])
        await session.flush()
        session.add(Membership(user_id=user.id, project_id=project.id, role="member"))
        job = Job(
            uuid=slurm_id,
            owner_user_id=user.id,
            project_id=project.id,
            cluster="testcluster",
            script="",
            name="latency-bench",
            state="running",
            slurm_job_id=slurm_id,
            stdout_path="/scratch/alice/latency-bench-%j.out",
        )
        session.add(job)
        await session.flush()
        job_id = job.id
    await engine.dispose()
    return job_id


async def _sign_in(client: httpx.AsyncClient) -> None:
    form = await client.get("/signin")
    token = form.text.split('name="csrf_token" value="', 1)[1].split('"', 1)[0]
    answer = await client.post(
        "/signin", data={"login": "alice", "password": PASSWORD, "csrf_token": token}
    )
    assert answer.status_code == 303, answer.text


async def _follow(client: httpx.AsyncClient, job_id: int, lines: int) -> list[float]:
    latencies: list[float] = []
    url = f"/jobs/{job_id}/logs/stdout/stream?offset=0"
    async with client.stream("GET", url, timeout=None) as response:
        async for raw in response.aiter_lines():
            arrived = time.time()
            parts = raw.removeprefix("data: ").split(" ")
            if raw.startswith("data: ") and len(parts) == 3 and parts[1] == "line":
                latencies.append(arrived - float(parts[0]))
                if parts[2] == str(lines):
                    return latencies
    return latencies


async def run(lines: int, every: float) -> None:
    with tempfile.TemporaryDirectory() as folder:
        database_url = f"sqlite+aiosqlite:///{Path(folder) / 'bench.db'}"
        migrate_to_head(database_url)
        slurm_id = await _submit(lines, every)
        job_id = await _arrange(database_url, slurm_id)
        settings = Settings(
            env="dev",
            database_url=database_url,
            clusters_file=Path(CLUSTERS_FILE),
            run_poller_in_web=False,
        )
        port = free_port()
        config = uvicorn.Config(create_app(settings), port=port, log_level="warning")
        server = uvicorn.Server(config)
        serving = asyncio.create_task(server.serve())
        # uvicorn reports start-up only through this flag, so it is polled.
        while not server.started:  # noqa: ASYNC110
            await asyncio.sleep(0.05)
        try:
            async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}") as client:
                await _sign_in(client)
                latencies = await _follow(client, job_id, lines)
        finally:
            server.should_exit = True
            await serving
    _report(latencies, slurm_id)


def _report(latencies: list[float], slurm_id: str) -> None:
    ordered = sorted(latencies)
    p95 = ordered[max(0, int(len(ordered) * 0.95) - 1)]
    verdict = "ok" if p95 < 1.0 else "OVER TARGET"
    print(
        f"log line -> SSE client (Slurm job {slurm_id}, {len(ordered)} lines): "
        f"p50 {statistics.median(ordered) * 1000:.0f} ms  p95 {p95 * 1000:.0f} ms  "
        f"max {ordered[-1] * 1000:.0f} ms  ({verdict})"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=40)
    parser.add_argument("--every", type=float, default=0.5)
    args = parser.parse_args()
    asyncio.run(run(args.lines, args.every))


if __name__ == "__main__":
    # Only the figures: the portal and httpx log every request at INFO.
    logging.basicConfig(level=logging.WARNING)
    main()
