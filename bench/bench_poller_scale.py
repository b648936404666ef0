"""The poller with 100,000 separate jobs in the queue: cycle time, memory, and how soon a
state change reaches the API, beside what Slurm's own squeue costs for the same queue.

    .venv/bin/python bench/bench_poller_scale.py [--jobs 100000] [--poll-interval 10]

Submits N held jobs as alice with plain sbatch (a few loops side by side; the dev cluster
allows 150,000 jobs), records them as portal jobs in a fresh PostgreSQL database, and starts
the real poller (``python -m app.poller``) and the portal. While the poller runs, it samples
the poller's RSS and the cycle time each cycle records, then cancels a few jobs at a time at
random moments and asks ``GET /api/v1/jobs?state=cancelled`` every 100 ms until each one is
listed cancelled. Baseline: one ``squeue`` of the same queue, in the poller's own format;
beside it, what reading that answer costs in one piece, every record reused (the poller
reads it while squeue prints).
Then alice cancels every remaining job at once (``scancel --name``), and the bench times
until the database holds every row cancelled, counting the cycles that failed meanwhile.
Takes 15-25 minutes, mostly sbatch.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import statistics
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import httpx
import psycopg
from bench_load import free_port, rss_mb
from bench_poller import fresh_database
from portal_process import CLUSTER, CLUSTERS_FILE, ROOT, alice_with_token, served
from sqlalchemy.engine import make_url

from app.poller.rules import Snapshot
from app.scheduler.slurm.commands import squeue_argv, squeue_format
from app.scheduler.slurm.marks import Marks
from app.scheduler.slurm.squeue import SqueueReader

NAME = "bench-scale"
LOOPS = 4
ROUNDS, PER_ROUND = 6, 20
MASS_CANCEL_DEADLINE = 900


def submit_held(count: int) -> list[str]:
    """``count`` held jobs as alice, from LOOPS sbatch loops side by side; their ids."""
    share = [count // LOOPS + (1 if i < count % LOOPS else 0) for i in range(LOOPS)]
    # slurmctld may time a client out while it purges jobs of an earlier run: try again
    # (a timed-out submission may have been queued all the same; the poller then records
    # that one as submitted outside the portal).
    sbatch = (
        "sbatch --parsable --hold --account=physics --chdir=/tmp --output=/dev/null "
        f"--job-name={NAME} --wrap=true"
    )
    loop = (
        "for i in $(seq {n}); do t=0; until " + sbatch + "; do t=$((t+1)); "
        "[ $t -lt 10 ] || exit 1; sleep 2; done; done"
    )
    shells = [
        subprocess.Popen(
            ["runuser", "-u", "alice", "--", "bash", "-c", loop.format(n=n)],
            stdout=subprocess.PIPE,
            text=True,
        )
        for n in share
        if n
    ]
    # --parsable prints "id;cluster" on a named cluster.
    out = [line for shell in shells for line in shell.communicate()[0].splitlines()]
    ids = [line.strip().split(";")[0] for line in out]
    if any(shell.returncode for shell in shells) or len(ids) != count:
        raise RuntimeError(f"sbatch stopped after {len(ids)} of {count} jobs")
    return ids


def record_as_portal_jobs(url: str, ids: list[str]) -> None:
    """One held row per job, as if each had been submitted through the portal."""
    with psycopg.connect(_plain(url)) as conn:
        owner, project = conn.execute(
            "SELECT m.user_id, m.project_id FROM memberships m JOIN users u ON u.id = m.user_id "
            "WHERE u.login = 'alice'"
        ).fetchone()  # type: ignore[misc]
        now = datetime.now(UTC)
        columns = (
            "uuid, owner_user_id, project_id, cluster, parameters, script, name, state, "
            "slurm_job_id, submitted_at, created_at, updated_at, submitted_outside"
        )
        with conn.cursor().copy(f"COPY jobs ({columns}) FROM STDIN") as copy:
            for slurm_id in ids:
                job = (str(uuid.uuid4()), owner, project, CLUSTER, "{}", "#!/bin/sh\ntrue\n", NAME)
                copy.write_row((*job, "held", slurm_id, now, now, now, False))


def _plain(url: str) -> str:
    return make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)


def squeue_seconds() -> float:
    """One squeue of the whole queue in the poller's format, as the poller's SSH user runs it."""
    return squeue_answer()[2]


def squeue_answer() -> tuple[Marks, str, float]:
    """One squeue as above: its marks, its answer and its seconds."""
    marks = Marks.new()
    fmt = squeue_format(marks.field, marks.end) + "\n"
    started = time.perf_counter()
    done = subprocess.run(squeue_argv(), input=fmt.encode(), capture_output=True, check=True)
    return marks, done.stdout.decode(), time.perf_counter() - started


def least_work_seconds(marks: Marks, answer: str) -> float:
    """Reading a full queue's answer in one piece with every record reused from the last
    read (a steady queue, nothing changed), and indexing it by job id, submission id and
    array, as each cycle does: the median of 3."""
    reader = SqueueReader(marks)
    reader.parse(answer)
    times = []
    for _ in range(3):
        started = time.perf_counter()
        Snapshot.of(reader.parse(answer))
        times.append(time.perf_counter() - started)
    return statistics.median(times)


@dataclass
class Watch:
    """What the sampler saw: (updated_at, cycle seconds, calls) per cycle and RSS in MB,
    before the mass cancel and after it."""

    cycles: dict[datetime, tuple[float, int]] = field(default_factory=dict)
    rss: list[float] = field(default_factory=list)
    delays: list[float] = field(default_factory=list)
    mass: MassCancel | None = None


@dataclass
class MassCancel:
    """Every remaining job cancelled at once: how long until all rows say so."""

    jobs: int
    since: datetime
    cycles: dict[datetime, tuple[float, int]] = field(default_factory=dict)
    rss: list[float] = field(default_factory=list)
    failed_cycles: set[datetime] = field(default_factory=set)
    scancel_seconds: float = 0.0
    seconds: float | None = None


async def sample(url: str, pid: int, watch: Watch, stop: asyncio.Event) -> None:
    async with await psycopg.AsyncConnection.connect(_plain(url), autocommit=True) as conn:
        while not stop.is_set():
            row = await (
                await conn.execute(
                    "SELECT updated_at, cycle_seconds, calls_last_cycle, last_error "
                    "FROM cluster_status WHERE cluster = %s",
                    (CLUSTER,),
                )
            ).fetchone()
            mass = watch.mass
            if row is not None and row[1] is not None and mass is None:
                watch.cycles[row[0]] = (row[1], row[2])
            elif row is not None and row[1] is not None and mass and row[0] >= mass.since:
                mass.cycles[row[0]] = (row[1], row[2])
                if row[3] is not None:
                    mass.failed_cycles.add(row[0])
            (watch if mass is None else mass).rss.append(rss_mb(pid))
            await asyncio.sleep(0.25)


async def cancel_and_watch(api: httpx.AsyncClient, ids: dict[str, int], watch: Watch) -> None:
    """ROUNDS times: cancel PER_ROUND jobs at a random moment, then time each until listed."""
    pool = list(ids)
    random.shuffle(pool)
    for round_ in range(ROUNDS):
        await asyncio.sleep(random.uniform(0, 10))
        chosen = pool[round_ * PER_ROUND : (round_ + 1) * PER_ROUND]
        cancel = ["runuser", "-u", "alice", "--", "scancel", *chosen]
        await asyncio.to_thread(subprocess.run, cancel, check=True)
        done_at, waiting = time.monotonic(), {ids[s] for s in chosen}
        deadline = done_at + 120
        while waiting and time.monotonic() < deadline:
            seen = waiting & await cancelled_ids(api)
            watch.delays += [time.monotonic() - done_at] * len(seen)
            waiting -= seen
            await asyncio.sleep(0.1)
        if waiting:
            raise RuntimeError(f"{len(waiting)} cancelled jobs not listed after 120 s")


async def cancelled_ids(api: httpx.AsyncClient) -> set[int]:
    """Every job the API lists as cancelled, page after page."""
    found: set[int] = set()
    params = {"state": "cancelled", "limit": "200"}
    while True:
        page = await api.get("/api/v1/jobs", params=params)
        page.raise_for_status()
        body = page.json()
        found |= {item["id"] for item in body["items"]}
        if body["next_cursor"] is None:
            return found
        params["cursor"] = body["next_cursor"]


def cancel_as_alice() -> float:
    """scancel until none of the bench's jobs is pending: with 100,000 of them slurmctld
    times some requests out, and scancel leaves those jobs as they were. Its seconds."""
    started = time.monotonic()
    cancel = ["runuser", "-u", "alice", "--", "scancel", f"--name={NAME}"]
    pending = ["squeue", "-h", "-u", "alice", "-t", "PD", f"--name={NAME}"]
    for _ in range(20):
        subprocess.run(cancel, capture_output=True, check=False)
        if not subprocess.run(pending, capture_output=True, check=False).stdout:
            return time.monotonic() - started
        time.sleep(3)
    raise RuntimeError(f"jobs named {NAME} still pending after 20 scancel")


async def cancel_everything_at_once(url: str, poller_pid: int) -> MassCancel:
    """alice cancels every job left at once; wait until every row says cancelled."""
    async with await psycopg.AsyncConnection.connect(_plain(url), autocommit=True) as conn:

        async def count(where: str) -> int:
            row = await (await conn.execute(f"SELECT count(*) FROM jobs {where}")).fetchone()
            return int(row[0]) if row else 0

        total = await count("")
        left = total - await count("WHERE state = 'cancelled'")
        watch, stop = Watch(mass=MassCancel(jobs=left, since=datetime.now(UTC))), asyncio.Event()
        sampler = asyncio.create_task(sample(url, poller_pid, watch, stop))
        started = time.monotonic()
        mass = watch.mass
        assert mass is not None
        mass.scancel_seconds = await asyncio.to_thread(cancel_as_alice)
        while await count("WHERE state = 'cancelled'") < total:
            if time.monotonic() - started > MASS_CANCEL_DEADLINE:
                raise RuntimeError(f"rows not all cancelled {MASS_CANCEL_DEADLINE} s after scancel")
            await asyncio.sleep(0.5)
        mass.seconds = time.monotonic() - started
        await asyncio.sleep(5)  # the sampler reads the last cycle's figures
        stop.set()
        await sampler
        return mass


def wait_for_empty_queue() -> None:
    """Jobs of an earlier run stay in the queue for a minute after they end; the poller
    would record them as jobs submitted outside the portal."""
    deadline = time.monotonic() + 180
    while subprocess.run(["squeue", "-h", "-u", "alice"], capture_output=True).stdout:
        if time.monotonic() > deadline:
            raise RuntimeError("alice still has jobs in the queue; scancel -u alice")
        time.sleep(2)


def start_poller(url: str, interval: float) -> subprocess.Popen[bytes]:
    env = {
        **os.environ,
        "PORTAL_ENV": "dev",
        "PORTAL_DATABASE_URL": url,
        "PORTAL_CLUSTERS_FILE": CLUSTERS_FILE,
        "PORTAL_POLL_INTERVAL": str(interval),
        "PORTAL_POLLER_METRICS_PORT": str(free_port()),
    }
    log = Path("/tmp/bench_poller_scale_poller.log").open("wb")  # noqa: SIM115
    return subprocess.Popen([sys.executable, "-m", "app.poller"], env=env, cwd=ROOT, stderr=log)


async def run(url: str, token: str, port: int, poller_pid: int, ids: dict[str, int]) -> Watch:
    watch, stop = Watch(), asyncio.Event()
    sampler = asyncio.create_task(sample(url, poller_pid, watch, stop))
    headers = {"Authorization": f"Bearer {token}"}
    async with httpx.AsyncClient(
        base_url=f"http://127.0.0.1:{port}", headers=headers, timeout=30
    ) as api:
        await asyncio.sleep(30)  # a few cycles over the full queue first
        await cancel_and_watch(api, ids, watch)
    stop.set()
    await sampler
    return watch


def report(watch: Watch, jobs: int, interval: float, squeue: list[float], least: float) -> None:
    # The first cycle writes every job as first seen (the rows were recorded without
    # Slurm's reason); the later ones are the steady state.
    in_order = [seconds for _, (seconds, _) in sorted(watch.cycles.items())]
    first, cycles = in_order[0], sorted(in_order[1:])
    calls = sorted({calls for _, calls in watch.cycles.values()})
    delays = sorted(watch.delays)
    p95 = delays[int(0.95 * (len(delays) - 1))]
    plain, cycle = statistics.median(squeue), statistics.median(cycles)
    print(f"jobs={jobs} poll interval={interval:g}s cycles seen={len(cycles)} calls={calls}")
    print(
        f"first cycle {first:.2f}s; later cycles: median {cycle:.2f}s max {cycles[-1]:.2f}s; "
        f"squeue alone (baseline): median {plain:.2f}s; ratio {cycle / plain:.2f}"
    )
    print(
        f"reading squeue's answer in one piece, every record reused, and indexing it: "
        f"{least:.2f}s (squeue + that / squeue alone = {(plain + least) / plain:.2f})"
    )
    print(f"poller RSS: max {max(watch.rss):.0f} MB, last {watch.rss[-1]:.0f} MB")
    print(
        f"cancel -> listed by the API ({len(delays)} jobs): p50 {statistics.median(delays):.2f}s "
        f"p95 {p95:.2f}s max {delays[-1]:.2f}s; target p95 <= {interval + 1:g}s"
    )


def report_mass(mass: MassCancel) -> None:
    seconds = sorted(cycle for cycle, _ in mass.cycles.values())
    calls = sorted({calls for _, calls in mass.cycles.values()})
    print(
        f"mass cancel of {mass.jobs} jobs: scancel took {mass.scancel_seconds:.1f}s; every row "
        f"cancelled {mass.seconds or 0:.1f}s after it started; {len(seconds)} cycles meanwhile "
        f"(longest {seconds[-1] if seconds else 0:.1f}s, calls {calls}), "
        f"{len(mass.failed_cycles)} failed; poller RSS max {max(mass.rss):.0f} MB"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=100_000)
    parser.add_argument("--poll-interval", type=float, default=10.0)
    args = parser.parse_args()
    wait_for_empty_queue()
    url = fresh_database()
    token, _ = asyncio.run(alice_with_token(url, account="physics"))
    started = time.monotonic()
    slurm_ids = submit_held(args.jobs)
    try:
        print(f"submitted {args.jobs} held jobs in {time.monotonic() - started:.0f} s")
        record_as_portal_jobs(url, slurm_ids)
        with psycopg.connect(_plain(url)) as conn:
            ids = dict(conn.execute("SELECT slurm_job_id, id FROM jobs").fetchall())
        squeue = [squeue_seconds() for _ in range(3)]
        least = least_work_seconds(*squeue_answer()[:2])
        poller = start_poller(url, args.poll_interval)
        try:
            with served(url) as port:
                watch = asyncio.run(run(url, token, port, poller.pid, ids))
            report(watch, args.jobs, args.poll_interval, squeue, least)
            report_mass(asyncio.run(cancel_everything_at_once(url, poller.pid)))
        finally:
            poller.terminate()
            poller.wait(timeout=60)
    finally:
        cancel_all()


def cancel_all() -> None:
    """scancel may time out too while slurmctld is busy: the jobs must not stay queued."""
    for _ in range(10):
        if subprocess.run(["scancel", f"--name={NAME}"], check=False).returncode == 0:
            return
        time.sleep(3)
    print(f"could not cancel the jobs named {NAME}: scancel --name={NAME}", file=sys.stderr)


if __name__ == "__main__":
    main()
