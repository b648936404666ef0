"""Cost of one queue call and one accounting call with 10,000 jobs known to Slurm.

Submits a held 10,000-task array as alice (cheap: nothing runs), measures, then cancels
it. A pending array is a single record to slurmctld, so ``--separate`` submits that many
individual held jobs instead (slower to set up, the realistic case for the poller).
Usage: .venv/bin/python bench/bench_queue.py [TASKS] [--separate]   (as root, cluster up)
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import sys
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx

from app.scheduler.config import load_clusters
from app.scheduler.registry import build_adapter
from app.scheduler.slurm import commands
from app.scheduler.slurm.adapter import SlurmAdapter
from app.scheduler.slurm.marks import Marks
from app.scheduler.types import JobSpec

USER = "alice"


async def clock(
    label: str, action: Callable[[], Awaitable[Any]], size: Callable[[Any], str]
) -> None:
    started = time.perf_counter()
    result = await action()
    elapsed = time.perf_counter() - started
    print(f"  {label:44s} {elapsed * 1000:8.1f} ms  {size(result)}")


def mb(data: bytes | str) -> str:
    return f"{len(data) / 1e6:7.2f} MB"


async def measure(ssh: SlurmAdapter, rest: SlurmAdapter) -> None:
    run = ssh.ssh.run
    since = datetime.now(UTC) - timedelta(hours=1)
    marks = Marks.new()
    listed = commands.squeue_format(marks.field, marks.end) + "\n"
    await clock(
        "squeue narrow (transport, bytes)",
        lambda: run(commands.squeue_argv(), stdin=listed),
        lambda r: mb(r.stdout),
    )
    await clock("ssh queue() (parsed records)", ssh.queue, lambda r: f"{len(r)} records")
    await clock(
        "squeue narrow --array (bytes)",
        lambda: run(commands.squeue_argv(expand_arrays=True), stdin=listed),
        lambda r: mb(r.stdout),
    )
    await clock(
        "squeue --json --array (bytes)",
        lambda: run(["squeue", "--json", "--array"]),
        lambda r: mb(r.stdout),
    )
    assert rest.rest is not None
    token = rest.rest.tokens.token_for(ssh.config.service_user)
    headers = {"X-SLURM-USER-NAME": ssh.config.service_user, "X-SLURM-USER-TOKEN": token}
    async with httpx.AsyncClient(base_url=ssh.config.rest_url, timeout=120) as client:
        await clock(
            "REST GET /slurm/v0.0.38/jobs (bytes)",
            lambda: client.get("/slurm/v0.0.38/jobs", headers=headers),
            lambda r: mb(r.content),
        )
    await clock("rest queue() (parsed records)", rest.queue, lambda r: f"{len(r)} records")
    await clock(
        "sacct since 1 h (transport, bytes)",
        lambda: run(commands.sacct_argv(since=since)),
        lambda r: mb(r.stdout),
    )
    await clock(
        "accounting(since=1 h) (parsed records)",
        lambda: ssh.accounting(since=since),
        lambda r: f"{len(r)} records",
    )


async def submit_separately(ssh: SlurmAdapter, count: int) -> list[str]:
    spec = JobSpec(script="#!/bin/bash\ntrue\n", name="bench-queue", account="physics", hold=True)
    gate = asyncio.Semaphore(8)

    async def one() -> str:
        async with gate:
            return await ssh.submit(spec, USER)

    started = time.perf_counter()
    ids = list(await asyncio.gather(*(one() for _ in range(count))))
    print(f"submitted {count} held jobs in {time.perf_counter() - started:.1f} s")
    return ids


async def submit_array(ssh: SlurmAdapter, tasks: int) -> list[str]:
    spec = JobSpec(
        script="#!/bin/bash\ntrue\n",
        name="bench-queue",
        account="physics",
        array=f"0-{tasks - 1}",
        hold=True,
    )
    job_id = await ssh.submit(spec, USER)
    print(f"held array {job_id} with {tasks} tasks")
    return [job_id]


async def main(tasks: int, separate: bool) -> None:
    config = next(iter(load_clusters("/var/lib/hpcportal-dev/clusters.toml").values()))
    ssh = build_adapter(config, "ssh")
    rest = build_adapter(dataclasses.replace(config, queue_reads="rest"), "rest")
    # Open the pooled connection and discover the REST version before timing anything.
    await ssh.ping()
    await rest.ping()
    ids: list[str] = []
    try:
        submit = submit_separately if separate else submit_array
        ids = await submit(ssh, tasks)
        print("one call each:")
        await measure(ssh, rest)
    finally:
        for start in range(0, len(ids), 1000):
            await ssh.cancel(ids[start : start + 1000], USER)
        await ssh.close()
        await rest.close()


if __name__ == "__main__":
    # Only the figures: the portal and httpx log every request at INFO.
    logging.basicConfig(level=logging.WARNING)
    count = int(sys.argv[1]) if len(sys.argv) > 1 and sys.argv[1].isdigit() else 10_000
    asyncio.run(main(count, "--separate" in sys.argv))
