"""Submitting through the portal's API against raw `sbatch` on the same cluster, in one run.

    .venv/bin/python bench/bench_submit_api.py [--jobs 60] [--clients 4] [--web-workers N]
                                               [--postgres]

Needs the local cluster (``scripts/dev-cluster up``), as root. Serves the portal as production
does, ``python -m app.serve`` with ``--web-workers`` uvicorn workers (default one per CPU, as
``PORTAL_WEB_WORKERS``; SQLite in a temporary directory, or with ``--postgres`` a fresh
PostgreSQL database, as production has; poller off) and, as ``alice`` with an
API token, submits a held one-line script with ``POST /api/v1/jobs`` (the whole use case: checks,
preflight as alice over SSH, both database writes, sbatch); raw ``sbatch --hold`` runs as
alice on the same machine (``runuser``). Both submit the same script with the same options.

1. One submit's latency: API, the SSH floor and raw in turn, p50 and p95 of each.
2. Throughput: one client after another (a loop in a researcher's script), then ``--clients``
   at once for each (raw: as many sbatch processes at once).

The SSH floor is the portal's scheduler library alone, in this process: the adapter's
``submit`` as alice (one command over its pooled SSH connection, as the web process sends it),
with no HTTP, database or checks. What the API costs above it is the portal's; what it costs
above raw ``sbatch`` is the login node's sshd starting a session for each command.

Every job is held and cancelled at the end, so the node does no work.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import statistics
import subprocess
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import bench_load
import httpx
from portal_process import CLUSTERS_FILE, alice_with_token, served

from app.config import available_cpus
from app.db import migrate_to_head
from app.scheduler.base import SchedulerAdapter
from app.scheduler.config import load_clusters
from app.scheduler.registry import build_adapter
from app.scheduler.types import JobSpec

SCRIPT = "#!/bin/bash\n#SBATCH --hold\ntrue\n"
RAW = ["runuser", "-u", "alice", "--", "sbatch", "--parsable", "--account=physics"]
RAW += ["--output=/dev/null", "--job-name=bench", "--chdir=/tmp"]

Submit = Callable[[], Awaitable[str]]


def _api_submit(client: httpx.AsyncClient, project_id: int) -> Submit:
    body = {"script": SCRIPT, "name": "bench", "project_id": project_id}

    async def submit() -> str:
        answer = await client.post("/api/v1/jobs", json=body)
        answer.raise_for_status()
        return str(answer.json()["slurm_job_id"])

    return submit


def _floor_submit(adapter: SchedulerAdapter) -> Submit:
    # What the API's request becomes (its defaults: alice's home, sbatch's own log name).
    spec = JobSpec(
        script=SCRIPT,
        name="bench",
        account="physics",
        working_dir="/home/alice",
        stdout="/home/alice/slurm-%j.out",
    )

    async def submit() -> str:
        return await adapter.submit(spec, "alice")

    return submit


async def _raw_submit() -> str:
    process = await asyncio.create_subprocess_exec(
        *RAW, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    out, err = await process.communicate(SCRIPT.encode())
    if process.returncode != 0:
        raise RuntimeError(err.decode())
    return out.decode().strip()


async def _timed(submit: Submit, ids: list[str]) -> float:
    started = time.perf_counter()
    ids.append(await submit())
    return (time.perf_counter() - started) * 1000


async def _latency(paths: dict[str, Submit], jobs: int, ids: list[str]) -> dict[str, list[float]]:
    """Each path's submit latencies (ms), the paths taking turns."""
    samples: dict[str, list[float]] = {name: [] for name in paths}
    for _ in range(jobs):
        for name, submit in paths.items():
            samples[name].append(await _timed(submit, ids))
    return samples


async def _rate(submit: Submit, jobs: int, clients: int, ids: list[str]) -> float:
    async def one_client(count: int) -> None:
        for _ in range(count):
            ids.append(await submit())

    shares = [jobs // clients + (1 if i < jobs % clients else 0) for i in range(clients)]
    started = time.perf_counter()
    await asyncio.gather(*(one_client(share) for share in shares))
    return jobs / (time.perf_counter() - started)


def _p(values: list[float], q: int) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[q - 1]


async def _measure(port: int, token: str, project_id: int, jobs: int, clients: int) -> None:
    headers = {"Authorization": f"Bearer {token}"}
    ids: list[str] = []
    base = f"http://127.0.0.1:{port}"
    limits = httpx.Limits(max_connections=clients)
    adapter = build_adapter(next(iter(load_clusters(CLUSTERS_FILE).values())))
    async with httpx.AsyncClient(
        base_url=base, headers=headers, timeout=60, limits=limits
    ) as client:
        paths = {
            "API": _api_submit(client, project_id),
            "SSH floor": _floor_submit(adapter),
            "raw sbatch": _raw_submit,
        }
        try:
            await _latency(paths, 3, ids)  # warm: connections, caches, the first SSH channel
            latencies = await _latency(paths, jobs, ids)
            rates = {
                label: {
                    name: await _rate(submit, jobs, count, ids) for name, submit in paths.items()
                }
                for label, count in (("one client", 1), (f"{clients} clients", clients))
            }
        finally:
            await adapter.close()
            subprocess.run(["scancel", *ids], check=False)  # noqa: ASYNC221
    _report(latencies, rates)


def _report(latencies: dict[str, list[float]], rates: dict[str, dict[str, float]]) -> None:
    p50 = {name: statistics.median(values) for name, values in latencies.items()}
    print(
        "submit latency  "
        + " | ".join(
            f"{name} p50 {p50[name]:.1f} ms p95 {_p(values, 95):.1f} ms"
            for name, values in latencies.items()
        )
    )
    print(
        f"  API/raw p50 {p50['API'] / p50['raw sbatch']:.2f}x | SSH floor/raw"
        f" {p50['SSH floor'] / p50['raw sbatch']:.2f}x | API/SSH floor"
        f" {p50['API'] / p50['SSH floor']:.2f}x"
    )
    for label, by_path in rates.items():
        api, floor, raw = by_path["API"], by_path["SSH floor"], by_path["raw sbatch"]
        print(
            f"throughput {label:10} API {api:5.1f} | SSH floor {floor:5.1f} | raw sbatch"
            f" {raw:5.1f} jobs/s | API/raw {api / raw:.2f} | SSH floor/raw {floor / raw:.2f}"
        )


async def run(jobs: int, clients: int, workers: int, postgres: bool) -> None:
    with tempfile.TemporaryDirectory() as temporary:
        if postgres:
            database_url = bench_load.database_url().replace("_load", "_submit")
            bench_load.fresh_database(database_url)
        else:
            database_url = f"sqlite+aiosqlite:///{Path(temporary) / 'bench.db'}"
            migrate_to_head(database_url)
        token, project_id = await alice_with_token(database_url, account="physics")
        with served(database_url, workers) as port:
            where = "PostgreSQL" if postgres else "SQLite"
            print(f"portal: {workers} web worker(s), {where}")
            await _measure(port, token, project_id, jobs, clients)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=60, help="jobs per measurement and path")
    parser.add_argument("--clients", type=int, default=4, help="clients at once (part 2)")
    parser.add_argument(
        "--web-workers", type=int, default=available_cpus(), help="uvicorn workers (app.serve)"
    )
    parser.add_argument(
        "--postgres",
        action="store_true",
        help="a fresh PostgreSQL database (PORTAL_TEST_PG_URL's server) instead of SQLite",
    )
    options = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    logging.getLogger("httpx").setLevel(logging.WARNING)
    asyncio.run(run(options.jobs, options.clients, options.web_workers, options.postgres))


if __name__ == "__main__":
    main()
