"""The job list through slurmrestd with N held jobs queued: a full listing every cycle, against
asking slurmctld first whether any job changed (``update_time``), on a quiet queue and on one
where a job changed between cycles.

    .venv/bin/python bench/bench_rest_listing.py [--jobs 2000] [--version 24.11] [--rounds 7]

Submits N held jobs as alice with plain sbatch on that version's cluster (a few loops side by
side), then times ``RestJobs.queue()`` in rounds, the three cases one after another in each
round and squeue over SSH (the SSH adapter's ``queue()``) after the change, for the newest API
the library speaks and the oldest the server offers (24.11: v0.0.42, asked with the listing's
``last_update``, and v0.0.40, asked with ``now-N``). Prints medians and ratios to the full
listing, and how much slurmrestd's memory grew; everything is cancelled at the end.
slurmrestd 24.11 kept about 1 GB more after each full listing of 10,000 jobs, so larger
queues here risk exhausting the machine's memory.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import statistics
import subprocess
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

from app.scheduler.config import ClusterConfig, load_clusters
from app.scheduler.registry import build_adapter
from app.scheduler.slurm.rest import RestTransport
from app.scheduler.slurm.rest_jobs import RestJobs
from app.scheduler.slurm.rest_queue import RestQueue

ROOT = Path(__file__).resolve().parent.parent
NAME = "bench-rest-listing"
LOOPS = 4
# Seconds between a change and the next read: slurmctld counts in whole seconds and calls a
# change in the second of a listing (or, asked with "now-N", within the slack and one second
# before its request) a change after it, so a read right after a change makes the next
# question come back changed too.
SETTLE = 5.0
APIS = {"24.11": ("v0.0.42", "v0.0.40"), "26.05": ("v0.0.45", "v0.0.42")}


def in_cluster(version: str, argv: list[str]) -> list[str]:
    return [str(ROOT / "scripts/dev-cluster"), "exec", "--version", version, "--", *argv]


def submit_held(version: str, count: int) -> list[str]:
    """``count`` held jobs as alice, from LOOPS sbatch loops side by side; their ids."""
    sbatch = (
        "sbatch --parsable --hold --account=physics --chdir=/tmp --output=/dev/null "
        f"--job-name={NAME} --wrap=true"
    )
    shells = [
        subprocess.Popen(
            in_cluster(
                version,
                [
                    "runuser",
                    "-u",
                    "alice",
                    "--",
                    "bash",
                    "-c",
                    f"for i in $(seq {n}); do {sbatch} || exit 1; done",
                ],
            ),
            stdout=subprocess.PIPE,
            text=True,
        )
        for n in [count // LOOPS + (1 if i < count % LOOPS else 0) for i in range(LOOPS)]
        if n
    ]
    ids = [line.split(";")[0] for s in shells for line in s.communicate()[0].split()]
    if len(ids) != count:
        raise RuntimeError(f"sbatch stopped after {len(ids)} of {count} jobs")
    return ids


def slurmrestd_rss_mb(config: ClusterConfig) -> int:
    """Resident memory of the slurmrestd serving ``config`` (found by its listening port)."""
    port = config.rest_url.rsplit(":", 1)[1]
    found = subprocess.run(
        ["pgrep", "-f", f"slurmrestd .*:{port}$"], capture_output=True, text=True
    )
    status = Path(f"/proc/{found.stdout.split()[0]}/status").read_text()
    return int(status.split("VmRSS:")[1].split()[0]) // 1024


def change_one(version: str, job_id: str, round_no: int) -> None:
    """A change slurmctld counts (a job's comment), made between two cycles."""
    argv = ["scontrol", "update", f"jobid={job_id}", f"comment=round-{round_no}"]
    subprocess.run(in_cluster(version, argv), check=True)


async def timed(action: Callable[[], Awaitable[object]]) -> float:
    started = time.perf_counter()
    await action()
    return time.perf_counter() - started


async def measure(
    config: ClusterConfig, api: str, version: str, ids: list[str], rounds: int
) -> None:
    full = RestJobs(RestTransport(config, version=api, timeout=120))
    full.listing = RestQueue(full_read_seconds=0)
    asking = RestJobs(RestTransport(config, version=api, timeout=120))
    squeue = build_adapter(config, "ssh")
    times: dict[str, list[float]] = {"full": [], "quiet": [], "changed": [], "squeue": []}
    rss_before = slurmrestd_rss_mb(config)
    try:
        listed = len(await full.queue())
        await asking.queue()
        await squeue.queue()
        for round_no in range(rounds):
            times["full"].append(await timed(full.queue))
            await asyncio.sleep(SETTLE)
            times["quiet"].append(await timed(asking.queue))
            change_one(version, ids[round_no % len(ids)], round_no)
            await asyncio.sleep(SETTLE)
            times["changed"].append(await timed(asking.queue))
            times["squeue"].append(await timed(squeue.queue))
    finally:
        await full.transport.close()
        await asking.transport.close()
        await squeue.close()
    base = statistics.median(times["full"])
    print(f"{api} ({listed} jobs listed, {rounds} rounds, medians):")
    print(f"  full listing every cycle      {base * 1000:9.1f} ms   1.000x")
    cases = (
        ("quiet", "asked, nothing changed"),
        ("changed", "asked, one job changed"),
        ("squeue", "squeue over SSH, one changed"),
    )
    for case, label in cases:
        median = statistics.median(times[case])
        print(f"  {label:29s} {median * 1000:9.1f} ms   {median / base:.3f}x")
    print(f"  answered unchanged: {asking.listing.unchanged_answers} of {rounds} quiet reads")
    grown = slurmrestd_rss_mb(config) - rss_before
    listings = rounds + 1 + 2 * rounds + 1 - asking.listing.unchanged_answers
    print(f"  slurmrestd RSS grew {grown} MB over {listings} full listings")


def cancel_all(version: str) -> None:
    subprocess.run(in_cluster(version, ["scancel", f"--name={NAME}"]), check=False)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--jobs", type=int, default=2_000)
    parser.add_argument("--version", default="24.11", choices=sorted(APIS))
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    config = next(
        iter(load_clusters(f"/var/lib/hpcportal-dev/{args.version}/clusters.toml").values())
    )
    started = time.monotonic()
    ids = submit_held(args.version, args.jobs)
    print(f"{len(ids)} held jobs submitted in {time.monotonic() - started:.0f} s")
    try:
        for api in APIS[args.version]:
            asyncio.run(measure(config, api, args.version, ids, args.rounds))
    finally:
        cancel_all(args.version)


if __name__ == "__main__":
    logging.basicConfig(level=logging.WARNING)
    main()
