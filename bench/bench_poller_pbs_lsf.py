"""The PBS and LSF pollers with 10,000 jobs in the queue: scheduler calls per cycle, cycle
time beside the same ``qstat``/``bjobs`` alone, memory.

    .venv/bin/python bench/bench_poller_pbs_lsf.py [--scheduler pbs|lsf] [--jobs 10000]

On the scheduler's dev cluster (``scripts/dev-cluster up --scheduler pbs|lsf``), submits N
held jobs as alice with the scheduler's own command on its head node (a few loops side by
side, outside the portal, charged to an account only this benchmark uses), then runs poll
cycles into a fresh PostgreSQL database: the first records the N jobs, the next ones track
them. Baseline: the poller's own listing (``qstat -f -F json -t -x`` / ``bjobs -w`` then
``bjobs -l``, both ``-a -u all``) over the same SSH connection, alone. At the end the
cluster is brought down with its state wiped and up again, so no later run sees the
benchmark's jobs or their history.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import resource
import statistics
import subprocess
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TypeVar

from bench_poller import BENCH_DB_URL, alice_in_physics, fresh_database
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.db import create_engine, create_sessionmaker
from app.poller.cycle import poll_cluster_once
from app.poller.runner import collect_less_often
from app.scheduler.config import ClusterConfig, load_clusters
from app.scheduler.lsf import commands as lsf_commands
from app.scheduler.lsf.adapter import LsfAdapter
from app.scheduler.pbs import commands as pbs_commands
from app.scheduler.pbs.adapter import PbsAdapter
from app.scheduler.registry import build_adapter

T = TypeVar("T")

ROOT = Path(__file__).resolve().parent.parent
DEV_CLUSTER = ROOT / "scripts" / "dev-cluster"
KEY_DIR = Path("/var/lib/hpcportal-dev")
LOOPS = 4
# One held job, as a researcher would type it on the head node; the account is the bench's own.
SUBMIT = {
    "pbs": "qsub -h -A bench -N bench -j oe -o /dev/null -- /bin/true",
    "lsf": "bsub -H -P bench -J bench -o /dev/null /bin/true",
}
LISTING = {
    "pbs": pbs_commands.qstat_argv(history=True),
    "lsf": lsf_commands.bjobs_argv(),
}


def cluster_of(scheduler: str) -> ClusterConfig:
    return next(iter(load_clusters(KEY_DIR / scheduler / "clusters.toml").values()))


def on_head(scheduler: str, *argv: str) -> subprocess.Popen[str]:
    command = [str(DEV_CLUSTER), "exec", "--scheduler", scheduler, "--", *argv]
    return subprocess.Popen(command, stdout=subprocess.DEVNULL, text=True)


def submit_held(scheduler: str, jobs: int) -> float:
    """``jobs`` held jobs as alice in LOOPS loops side by side; the seconds it took."""
    started = time.perf_counter()
    share = -(-jobs // LOOPS)
    loops = []
    for first in range(0, jobs, share):
        count = min(share, jobs - first)
        line = (
            f"cd /tmp && for i in $(seq {count}); do {SUBMIT[scheduler]} >/dev/null || exit 1; done"
        )
        loops.append(on_head(scheduler, "runuser", "-u", "alice", "--", "bash", "-c", line))
    if any(loop.wait() != 0 for loop in loops):
        raise SystemExit(f"submitting to {scheduler} failed")
    return time.perf_counter() - started


async def timed(call: Callable[[], Awaitable[T]]) -> tuple[float, T]:
    started = time.perf_counter()
    result = await call()
    return time.perf_counter() - started, result


async def measure(
    sessionmaker: async_sessionmaker[AsyncSession], config: ClusterConfig, cycles: int
) -> None:
    collect_less_often()  # as the poller's own loop does
    adapter = build_adapter(config, "ssh")
    assert isinstance(adapter, PbsAdapter | LsfAdapter)
    argv = LISTING[config.scheduler]
    try:
        listing, size = [], 0
        for _ in range(3):
            seconds, said = await timed(lambda: adapter.ssh.run(argv))
            listing.append(seconds)
            size = len(said.text)
        alone = statistics.median(listing)
        name = {"pbs": "qstat", "lsf": "bjobs listing"}[config.scheduler]
        print(f"one {name} alone: {alone:.2f} s ({size / 2**20:.1f} MiB of text)")
        steady = []
        for cycle in range(cycles + 1):
            seconds, result = await timed(
                lambda: poll_cluster_once(sessionmaker, config.name, adapter)
            )
            label = "recording cycle" if cycle == 0 else f"cycle {cycle}"
            print(
                f"{label}: tracked={result.tracked} scheduler_calls={result.calls} "
                f"transitions={result.transitions} ok={result.is_ok} time={seconds:.2f} s"
            )
            if cycle:
                steady.append(seconds)
        ratio = statistics.median(steady) / alone
        print(f"steady cycle / one listing alone: {ratio:.2f}")
    finally:
        await adapter.close()
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"max RSS of the polling process {rss_mb:.0f} MiB")


async def run(scheduler: str, jobs: int, cycles: int) -> None:
    config = cluster_of(scheduler)
    url = make_url(BENCH_DB_URL).set(database=f"hpcportal_bench_{scheduler}")
    engine = create_engine(fresh_database(url.render_as_string(hide_password=False)))
    try:
        await alice_in_physics(create_sessionmaker(engine), config.name, account="bench")
        seconds = await asyncio.to_thread(submit_held, scheduler, jobs)
        print(
            f"{scheduler}: {jobs} held jobs submitted in {seconds:.0f} s "
            f"({jobs / seconds:.0f} jobs/s, {LOOPS} loops)"
        )
        await measure(create_sessionmaker(engine), config, cycles)
    finally:
        await engine.dispose()


def wipe(scheduler: str) -> None:
    for step in (["down", "--wipe"], ["up"]):
        command = [str(DEV_CLUSTER), *step, "--scheduler", scheduler]
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        if done.returncode:
            raise SystemExit(f"{' '.join(command)} failed:\n{done.stderr}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scheduler", choices=("pbs", "lsf"), action="append")
    parser.add_argument("--jobs", type=int, default=10_000)
    parser.add_argument("--cycles", type=int, default=3)
    args = parser.parse_args()
    for scheduler in args.scheduler or ["pbs", "lsf"]:
        try:
            asyncio.run(run(scheduler, args.jobs, args.cycles))
        finally:
            wipe(scheduler)


if __name__ == "__main__":
    # Only the figures: the poller logs every cycle at INFO.
    logging.basicConfig(level=logging.WARNING)
    main()
