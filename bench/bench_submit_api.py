"""Submitting through the portal's API against raw `sbatch` on the same cluster, in one run.

    .venv/bin/python bench/bench_submit_api.py [--jobs 60] [--clients 4] [--web-workers N]

Needs the local cluster (``scripts/dev-cluster up``), as root. Serves the portal as production
does, ``python -m app.serve`` with ``--web-workers`` uvicorn workers (default one per CPU, as
``PORTAL_WEB_WORKERS``; SQLite in a temporary directory, poller off) and, as ``alice`` with an
API token, submits a held one-line script with ``POST /api/v1/jobs`` (the whole use case: checks,
preflight as alice over SSH, both database writes, sbatch); raw ``sbatch --hold`` runs as
alice on the same machine (``runuser``). Both submit the same script with the same options.

1. One submit's latency: API and raw alternately, p50 and p95 of each.
2. Throughput: one client after another (a loop in a researcher's script), then ``--clients``
   at once for both (raw: as many sbatch processes at once).

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

import httpx
from portal_process import alice_with_token, served

from app.config import available_cpus
from app.db import migrate_to_head

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


async def _latency(api: Submit, jobs: int, ids: list[str]) -> tuple[list[float], list[float]]:
    through, raw = [], []
    for _ in range(jobs):
        through.append(await _timed(api, ids))
        raw.append(await _timed(_raw_submit, ids))
    return through, raw


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
    async with httpx.AsyncClient(
        base_url=base, headers=headers, timeout=60, limits=limits
    ) as client:
        api = _api_submit(client, project_id)
        try:
            await _latency(api, 3, ids)  # warm: connections, caches, the first SSH channel
            through, raw = await _latency(api, jobs, ids)
            rates = {
                "one client": (
                    await _rate(api, jobs, 1, ids),
                    await _rate(_raw_submit, jobs, 1, ids),
                ),
                f"{clients} clients": (
                    await _rate(api, jobs, clients, ids),
                    await _rate(_raw_submit, jobs, clients, ids),
                ),
            }
        finally:
            subprocess.run(["scancel", *ids], check=False)  # noqa: ASYNC221
    _report(through, raw, rates)


def _report(through: list[float], raw: list[float], rates: dict[str, tuple[float, float]]) -> None:
    api50, raw50 = statistics.median(through), statistics.median(raw)
    print(
        f"submit latency  API p50 {api50:.1f} ms p95 {_p(through, 95):.1f} ms | "
        f"raw sbatch p50 {raw50:.1f} ms p95 {_p(raw, 95):.1f} ms | API/raw p50 {api50 / raw50:.2f}x"
    )
    for label, (api_rate, raw_rate) in rates.items():
        print(
            f"throughput {label:10} API {api_rate:5.1f} jobs/s | raw sbatch {raw_rate:5.1f} jobs/s"
            f" | API/raw {api_rate / raw_rate:.2f}"
        )


async def run(jobs: int, clients: int, workers: int) -> None:
    with tempfile.TemporaryDirectory() as temporary:
        database_url = f"sqlite+aiosqlite:///{Path(temporary) / 'bench.db'}"
        migrate_to_head(database_url)
        token, project_id = await alice_with_token(database_url, account="physics")
        with served(database_url, workers) as port:
            print(f"portal: {workers} web worker(s)")
            await _measure(port, token, project_id, jobs, clients)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=60, help="jobs per measurement and path")
    parser.add_argument("--clients", type=int, default=4, help="clients at once (part 2)")
    parser.add_argument(
        "--web-workers", type=int, default=available_cpus(), help="uvicorn workers (app.serve)"
    )
    options = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    logging.getLogger("httpx").setLevel(logging.WARNING)
    asyncio.run(run(options.jobs, options.clients, options.web_workers))


if __name__ == "__main__":
    main()
