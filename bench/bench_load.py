"""Many simulated users against one portal process on PostgreSQL, with the poller running.

Seeds the demo users and N finished jobs (default 20,000) into a fresh database
``<PORTAL_TEST_PG_URL database>_load``, starts ``uvicorn --factory app.main:create_app`` and
a separate ``python -m app.poller`` on the development cluster (``--poller web`` runs it
inside the web process instead), and runs U users (default 200), each an
``httpx.AsyncClient`` with its own signed-in session (signed in a few at a time before the
clock starts) and its own API token, looping over the job list, a job page, its status
fragment and ``GET /api/v1/jobs`` until the duration ends. ``--think 0`` (the default) sends
each user's next request as soon as the last one is answered (the process's capacity);
``--think 3`` pauses 1.5-4.5 s between requests, as a person with a live job page open does
(the page polls its status every 3 s).
Prints throughput and p50/p95 per endpoint, the error count, the poll cycles the poller
completed meanwhile, and each process's RSS sampled every few seconds with its drift after
the first minute. Loopback only.
Run: .venv/bin/python bench/bench_load.py --duration 600 [--users 200] [--think 0]
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import random
import re
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import httpx
from sqlalchemy import insert, select
from sqlalchemy.engine import make_url

from app.db import create_engine, create_sessionmaker, migrate_to_head
from app.models.jobs import Job
from app.models.projects import Membership
from app.models.users import User
from app.tokens import service as tokens
from app.users.service import actor_for

# The repository's root, for tests.portal: a script's path starts with its own folder.
if str(Path(__file__).resolve().parents[1]) not in sys.path:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.portal import free_port

ROOT = Path(__file__).resolve().parent.parent
CLUSTERS_FILE = os.environ.get("PORTAL_CLUSTERS_FILE", "/var/lib/hpcportal-dev/clusters.toml")
LOGINS = ("alice", "carol", "bob", "dave")
CSRF = re.compile(r'name="csrf_token" value="([^"]+)"')
RSS_EVERY = 5.0
WARM_UP = 60.0
SIGN_IN_CONCURRENCY = 8
# One user sends one request at a time. Idle connections are dropped before uvicorn's 5 s
# keep-alive timeout: reusing one the server is closing fails on the client, not the portal.
USER_LIMITS = httpx.Limits(max_connections=1, keepalive_expiry=4.0)


def database_url() -> str:
    base = os.environ.get(
        "PORTAL_TEST_PG_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/hpcportal_test"
    )
    url = make_url(base)
    return url.set(database=f"{url.database}_load").render_as_string(hide_password=False)


def fresh_database(url: str) -> None:
    import psycopg

    admin = make_url(url).set(drivername="postgresql", database="postgres")
    name = make_url(url).database
    with psycopg.connect(admin.render_as_string(hide_password=False), autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')
    migrate_to_head(url)


async def seed(url: str, jobs: int, users: int) -> tuple[dict[str, list[int]], list[str]]:
    """(job ids per login, one API token per simulated user)."""
    engine = create_engine(url)
    try:
        async with create_sessionmaker(engine)() as session:
            people = {u.login: u for u in await session.scalars(select(User))}
            project_of = {
                m.user_id: m.project_id for m in await session.scalars(select(Membership))
            }
            rows = [_job_row(people[LOGINS[i % len(LOGINS)]], project_of, i) for i in range(jobs)]
            for start in range(0, len(rows), 2000):
                await session.execute(insert(Job), rows[start : start + 2000])
            secrets = [await _token(session, people[LOGINS[i % len(LOGINS)]]) for i in range(users)]
            await session.commit()
            ids: dict[str, list[int]] = defaultdict(list)
            for job in await session.execute(select(Job.id, Job.owner_user_id)):
                login = next(k for k, v in people.items() if v.id == job.owner_user_id)
                ids[login].append(job.id)
            return ids, secrets
    finally:
        await engine.dispose()


def _job_row(owner: User, project_of: dict[int, int], index: int) -> dict[str, object]:
    return {
        "uuid": str(uuid.uuid4()),
        "owner_user_id": owner.id,
        "project_id": project_of[owner.id],
        "cluster": "testcluster",
        "script": "#!/bin/bash\necho load\n",
        "name": f"load-{index}",
        "state": "completed",
        "slurm_job_id": str(1_000_000 + index),
        "exit_code": 0,
    }


async def _token(session: object, user: User) -> str:
    created = await tokens.create_token(
        session,  # type: ignore[arg-type]
        await actor_for(session, user),  # type: ignore[arg-type]
        name=f"load-{uuid.uuid4().hex[:8]}",
        scopes=["read"],
        lifetime_days=1,
    )
    return created.secret


def portal_env(url: str, args: argparse.Namespace) -> dict[str, str]:
    return {
        **os.environ,
        "PORTAL_ENV": "dev",
        "PORTAL_DATABASE_URL": url,
        "PORTAL_CLUSTERS_FILE": CLUSTERS_FILE,
        "PORTAL_RUN_POLLER_IN_WEB": "true" if args.poller == "web" else "false",
        "PORTAL_POLL_INTERVAL": str(args.poll_interval),
    }


def start_poller(
    url: str, args: argparse.Namespace, log: Path
) -> tuple[subprocess.Popen[bytes], str]:
    """A standalone poller and the address of its metrics."""
    port = free_port()
    env = portal_env(url, args) | {"PORTAL_POLLER_METRICS_PORT": str(port)}
    with log.open("wb") as errors:
        poller = subprocess.Popen(
            [sys.executable, "-m", "app.poller"], env=env, cwd=ROOT, stderr=errors
        )
    metrics_url = f"http://127.0.0.1:{port}/metrics"
    wait_until_answers(metrics_url, "the poller")
    return poller, metrics_url


def wait_until_answers(url: str, what: str) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if httpx.get(url, timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            time.sleep(0.3)
    raise RuntimeError(f"{what} did not start")


def start_server(
    url: str, args: argparse.Namespace, log: Path
) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    command = [sys.executable, "-m", "uvicorn", "--factory", "app.main:create_app"]
    command += ["--host", "127.0.0.1", "--port", str(port), "--no-access-log"]
    command += ["--log-level", "warning", "--workers", str(args.web_workers)]
    with log.open("wb") as errors:
        server = subprocess.Popen(command, env=portal_env(url, args), cwd=ROOT, stderr=errors)
    base = f"http://127.0.0.1:{port}"
    wait_until_answers(f"{base}/healthz", "the portal")
    return server, base


def web_pids(server: subprocess.Popen[bytes], workers: int) -> dict[str, int]:
    """The processes that answer requests: the server itself, or each of its workers."""
    if workers == 1:
        return {"web": server.pid}
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        tasks = Path(f"/proc/{server.pid}/task").glob("*/children")
        children = {int(pid) for task in tasks for pid in task.read_text().split()}
        # uvicorn's supervisor also starts a resource tracker; workers run the portal.
        workers_found = [pid for pid in children if _runs_portal(pid)]
        if len(workers_found) == workers:
            return {f"web-{i + 1}": pid for i, pid in enumerate(sorted(workers_found))}
        time.sleep(0.5)
    raise RuntimeError("the web workers did not start")


def _runs_portal(pid: int) -> bool:
    try:
        return b"resource_tracker" not in Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


@dataclass
class Results:
    latencies: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    errors: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    # What went wrong, e.g. "HTTP 500" or "ReadTimeout", so an error can be explained.
    causes: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    # Per process name ("web", "poller"): (seconds since the clock started, RSS MB).
    rss: dict[str, list[tuple[float, float]]] = field(default_factory=lambda: defaultdict(list))


async def _timed(results: Results, kind: str, call: object) -> None:
    started = time.perf_counter()
    try:
        response = await call  # type: ignore[misc]
        if response.status_code >= 400:
            results.errors[kind] += 1
            results.causes[f"HTTP {response.status_code}"] += 1
    except httpx.HTTPError as error:
        results.errors[kind] += 1
        results.causes[type(error).__name__] += 1
    results.latencies[kind].append(time.perf_counter() - started)


async def _sign_in(client: httpx.AsyncClient, login: str) -> None:
    form = await client.get("/signin")
    token = CSRF.search(form.text)
    if token is None:
        raise RuntimeError(f"sign-in form without CSRF token (HTTP {form.status_code})")
    data = {"login": login, "password": f"{login}-demo", "csrf_token": token.group(1)}
    answer = await client.post("/signin", data=data)
    if answer.status_code != 303:
        raise RuntimeError(f"sign-in as {login} answered HTTP {answer.status_code}")


async def sign_in_all(clients: list[tuple[httpx.AsyncClient, str]]) -> float:
    """Signs every simulated user in before the clock starts; returns the seconds taken.

    A few at a time, as people arrive: each sign-in costs about 0.1 s of Argon2, and 200
    at once would measure the password hash, not the pages.
    """
    started = time.monotonic()
    gate = asyncio.Semaphore(SIGN_IN_CONCURRENCY)

    async def one(client: httpx.AsyncClient, login: str) -> None:
        async with gate:
            await _sign_in(client, login)

    await asyncio.gather(*(one(client, login) for client, login in clients))
    return time.monotonic() - started


async def user_loop(
    client: httpx.AsyncClient,
    secret: str,
    job_ids: list[int],
    end: float,
    results: Results,
    think: float,
) -> None:
    api = {"Authorization": f"Bearer {secret}"}
    turn = 0
    # Users start spread over one think time, as people do, not in one wave.
    await asyncio.sleep(random.uniform(0, think))
    while time.monotonic() < end:
        job_id = job_ids[(turn * 7919) % len(job_ids)]
        turn += 1
        for kind, path, headers in (
            ("GET /jobs", "/jobs", None),
            ("GET /jobs/{id}", f"/jobs/{job_id}", None),
            ("GET /jobs/{id}/status", f"/jobs/{job_id}/status", None),
            ("GET /api/v1/jobs", "/api/v1/jobs", api),
        ):
            if time.monotonic() >= end:
                return
            await _timed(results, kind, client.get(path, headers=headers))
            if think:
                pause = think * random.uniform(0.5, 1.5)
                await asyncio.sleep(min(pause, max(0.0, end - time.monotonic())))


async def sample_rss(pids: dict[str, int], end: float, results: Results) -> None:
    started = time.monotonic()
    while True:
        for name, pid in pids.items():
            results.rss[name].append((time.monotonic() - started, rss_mb(pid)))
        if time.monotonic() >= end:
            return
        await asyncio.sleep(min(RSS_EVERY, max(0.0, end - time.monotonic())))


def poll_cycles(metrics_url: str | None) -> float | None:
    """Poll cycles the poller completed so far, from its metrics (None without a URL)."""
    if metrics_url is None:
        return None
    total = 0.0
    for line in httpx.get(metrics_url, timeout=10).text.splitlines():
        if line.startswith("portal_poll_cycles_total{"):
            total += float(line.rsplit(" ", 1)[1])
    return total


def report(results: Results, seconds: float, users: int, jobs: int) -> None:
    total = sum(len(v) for v in results.latencies.values())
    print(
        f"users={users} jobs={jobs} duration={seconds:.0f}s requests={total} "
        f"rps={total / seconds:.1f} errors={sum(results.errors.values())}"
    )
    print(f"{'endpoint':24} {'count':>7} {'rps':>7} {'p50 ms':>8} {'p95 ms':>8} {'errors':>6}")
    for kind, samples in sorted(results.latencies.items()):
        ordered = sorted(samples)
        p95 = ordered[int(0.95 * (len(ordered) - 1))]
        print(
            f"{kind:24} {len(samples):7d} {len(samples) / seconds:7.1f} "
            f"{statistics.median(ordered) * 1000:8.1f} {p95 * 1000:8.1f} "
            f"{results.errors[kind]:6d}"
        )
    if results.causes:
        print("errors: " + ", ".join(f"{n} x {c}" for c, n in sorted(results.causes.items())))
    for name, marks in results.rss.items():
        report_rss(name, marks)


def report_rss(name: str, marks: list[tuple[float, float]]) -> None:
    """The samples, and the drift after the first minute (warm-up: pools, caches, imports)."""
    step = max(1, len(marks) // 12)
    print(f"rss MB {name}: " + " ".join(f"{t:.0f}s={mb:.0f}" for t, mb in marks[::step]))
    settled = [mb for t, mb in marks if t >= WARM_UP] or [marks[-1][1]]
    print(
        f"rss {name}: start={marks[0][1]:.1f} MB at {WARM_UP:.0f}s={settled[0]:.1f} MB "
        f"end={marks[-1][1]:.1f} MB max={max(m for _, m in marks):.1f} MB "
        f"drift after {WARM_UP:.0f}s={settled[-1] - settled[0]:+.1f} MB"
    )


@dataclass(frozen=True)
class Load:
    """Who loads the portal, for how long, and which processes are watched."""

    base: str
    pids: dict[str, int]
    logins: list[str]
    secrets: list[str]
    ids: dict[str, list[int]]
    duration: float
    think: float


async def drive(load: Load, results: Results) -> tuple[float, float]:
    """Signs every user in, then loads the portal; (seconds signing in, seconds of load)."""
    clients = [
        httpx.AsyncClient(base_url=load.base, timeout=60, limits=USER_LIMITS) for _ in load.logins
    ]
    try:
        signed_in = await sign_in_all(list(zip(clients, load.logins, strict=True)))
        end = time.monotonic() + load.duration
        started = time.monotonic()
        users = [
            user_loop(client, load.secrets[i], load.ids[load.logins[i]], end, results, load.think)
            for i, client in enumerate(clients)
        ]
        await asyncio.gather(sample_rss(load.pids, end, results), *users)
        return signed_in, time.monotonic() - started
    finally:
        await asyncio.gather(*(client.aclose() for client in clients))


async def run(load: Load, metrics_url: str | None, args: argparse.Namespace) -> None:
    results = Results()
    cycles_before = await asyncio.to_thread(poll_cycles, metrics_url)
    signed_in, seconds = await drive(load, results)
    print(f"signed in {args.users} users in {signed_in:.1f} s")
    report(results, seconds, args.users, args.jobs)
    cycles_after = await asyncio.to_thread(poll_cycles, metrics_url)
    if cycles_before is not None and cycles_after is not None:
        print(
            f"poller: {cycles_after - cycles_before:.0f} poll cycles during the sign-ins and "
            f"the run (interval {args.poll_interval:g} s)"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration", type=float, default=600.0, help="seconds of load")
    parser.add_argument("--users", type=int, default=200)
    parser.add_argument("--jobs", type=int, default=20_000)
    parser.add_argument("--think", type=float, default=0.0, help="mean pause between requests")
    parser.add_argument("--poller", choices=("process", "web"), default="process")
    parser.add_argument("--poll-interval", type=float, default=2.0)
    parser.add_argument("--web-workers", type=int, default=1, help="uvicorn worker processes")
    args = parser.parse_args()
    url = database_url()
    fresh_database(url)
    env = {**os.environ, "PORTAL_DATABASE_URL": url, "PORTAL_CLUSTERS_FILE": CLUSTERS_FILE}
    subprocess.run(
        [sys.executable, "-m", "app.seed"], env=env, cwd=ROOT, check=True, stdout=subprocess.DEVNULL
    )
    ids, secrets = asyncio.run(seed(url, args.jobs, args.users))
    logs = Path(tempfile.gettempdir())
    server, base = start_server(url, args, logs / "bench_load_server.log")
    pids, metrics_url, poller = web_pids(server, args.web_workers), None, None
    if args.poller == "process":
        poller, metrics_url = start_poller(url, args, logs / "bench_load_poller.log")
        pids["poller"] = poller.pid
    print(f"logs: {logs}/bench_load_*.log; poller: {args.poller}; think: {args.think:g} s")
    try:
        logins = [LOGINS[i % len(LOGINS)] for i in range(args.users)]
        load = Load(base, pids, logins, secrets, ids, args.duration, args.think)
        asyncio.run(run(load, metrics_url, args))
    finally:
        for process in (server, poller):
            if process is not None:
                process.terminate()
                process.wait(timeout=30)


if __name__ == "__main__":
    # Only the figures: the portal and httpx log every request at INFO.
    logging.basicConfig(level=logging.WARNING)
    main()
