"""Submission latency: pooled SSH adapter vs OpenSSH per call vs local runuser, REST vs bare httpx.

Every job is submitted held and cancelled at the end, so the benchmark does not load the
node. Usage: .venv/bin/python bench/bench_submit.py [N]   (as root, cluster up)
"""

from __future__ import annotations

import asyncio
import logging
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import httpx

from app.scheduler.base import SchedulerAdapter
from app.scheduler.config import ClusterConfig, load_clusters
from app.scheduler.registry import build_adapter
from app.scheduler.slurm.adapter import SlurmAdapter
from app.scheduler.slurm.rest_parsing import submit_payload_v0038
from app.scheduler.types import JobSpec

USER = "alice"
SPEC = JobSpec(script="#!/bin/bash\ntrue\n", name="bench", account="physics", hold=True)


async def timed(n: int, submit: Callable[[], Awaitable[str]], ids: list[str]) -> float:
    samples = []
    for _ in range(n):
        started = time.perf_counter()
        ids.append(await submit())
        samples.append((time.perf_counter() - started) * 1000)
    return statistics.median(samples)


def run_cli(argv: list[str]) -> str:
    out = subprocess.run(argv, input=SPEC.script, capture_output=True, text=True, check=True)
    return out.stdout.strip().split(";")[0]


def openssh_argv(config: ClusterConfig, tmp: Path) -> list[str]:
    from app.scheduler.slurm.certificates import UserCertificates

    key, cert = UserCertificates(config).credentials_for(USER)
    key.write_private_key(str(tmp / "id"))
    (tmp / "id").chmod(0o600)
    cert.write_certificate(str(tmp / "id-cert.pub"))
    return [
        "ssh",
        "-p",
        str(config.login_port),
        "-i",
        str(tmp / "id"),
        "-o",
        f"CertificateFile={tmp / 'id-cert.pub'}",
        "-o",
        "BatchMode=yes",
        "-o",
        f"UserKnownHostsFile={config.known_hosts}",
        f"{USER}@{config.login_host}",
        "sbatch --parsable --hold --account=physics",
    ]


async def bare_rest(config: ClusterConfig, client: httpx.AsyncClient, token: str) -> str:
    body = submit_payload_v0038(SPEC, f"/home/{USER}")
    headers = {"X-SLURM-USER-NAME": USER, "X-SLURM-USER-TOKEN": token}
    response = await client.post("/slurm/v0.0.38/job/submit", json=body, headers=headers)
    return str(response.json()["job_id"])


async def main(n: int) -> None:
    config = next(iter(load_clusters("/var/lib/hpcportal-dev/clusters.toml").values()))
    ssh, rest = build_adapter(config, "ssh"), build_adapter(config, "rest")
    ids: list[str] = []
    try:
        results = await measure(n, config, ssh, rest, ids)
    finally:
        for start in range(0, len(ids), 500):
            await ssh.cancel(ids[start : start + 500], USER)
        await ssh.close()
        await rest.close()
    report(n, results)


async def measure(
    n: int, config: ClusterConfig, ssh: SchedulerAdapter, rest: SlurmAdapter, ids: list[str]
) -> dict[str, float]:
    results: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as tmp:
        argv = openssh_argv(config, Path(tmp))
        results["ssh adapter (pooled)"] = await timed(n, lambda: ssh.submit(SPEC, USER), ids)
        results["openssh per call"] = await timed(n, lambda: asyncio.to_thread(run_cli, argv), ids)
    local = ["runuser", "-u", USER, "--", "sbatch", "--parsable", "--hold", "--account=physics"]
    results["local runuser sbatch"] = await timed(n, lambda: asyncio.to_thread(run_cli, local), ids)
    results["rest adapter"] = await timed(n, lambda: rest.submit(SPEC, USER), ids)
    assert rest.rest is not None
    token = rest.rest.tokens.token_for(USER)
    async with httpx.AsyncClient(base_url=config.rest_url) as client:
        results["bare httpx keep-alive"] = await timed(
            n, lambda: bare_rest(config, client, token), ids
        )
    return results


def report(n: int, results: dict[str, float]) -> None:
    print(f"median of {n} submits each (held jobs, cancelled afterwards)")
    for name, median in results.items():
        print(f"  {name:24s} {median:8.1f} ms")
    ssh_ms = results["ssh adapter (pooled)"]
    print(f"  openssh per call / ssh adapter : {results['openssh per call'] / ssh_ms:5.1f}x")
    print(f"  ssh adapter / local runuser    : {ssh_ms / results['local runuser sbatch']:5.1f}x")
    ratio = results["rest adapter"] / results["bare httpx keep-alive"]
    print(f"  rest adapter / bare httpx      : {ratio:5.2f}x")


if __name__ == "__main__":
    # Only the figures: the portal and httpx log every request at INFO.
    logging.basicConfig(level=logging.WARNING)
    asyncio.run(main(int(sys.argv[1]) if len(sys.argv) > 1 else 50))
