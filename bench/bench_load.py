"""Many simulated users against one portal process on PostgreSQL, with the poller running.

Seeds the demo users and N finished jobs (default 20,000) into a fresh database
``<PORTAL_TEST_PG_URL database>_load``, starts ``uvicorn --factory app.main:create_app`` with
the in-process poller on the development cluster, and runs U users (default 200), each an
``httpx.AsyncClient`` with its own signed-in session (signed in a few at a time before the
clock starts) and its own API token, looping over the job list, a job page, its status
fragment and ``GET /api/v1/jobs`` until the duration ends.
Prints throughput and p50/p95 per endpoint, the error count and the web process's RSS
sampled every few seconds. Loopback only.
Run: .venv/bin/python bench/bench_load.py --duration 180 [--users 200] [--jobs 20000]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import socket
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
from app.models import Job, Membership, User
from app.tokens import service as tokens
from app.users.service import actor_for

ROOT = Path(__file__).resolve().parent.parent
CLUSTERS_FILE = os.environ.get("PORTAL_CLUSTERS_FILE", "/var/lib/hpcportal-dev/clusters.toml")
LOGINS = ("alice", "carol", "bob", "dave")
CSRF = re.compile(r'name="csrf_token" value="([^"]+)"')
RSS_EVERY = 5.0
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


def start_server(url: str, log: Path) -> tuple[subprocess.Popen[bytes], str]:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = {
        **os.environ,
        "PORTAL_ENV": "dev",
        "PORTAL_DATABASE_URL": url,
        "PORTAL_CLUSTERS_FILE": CLUSTERS_FILE,
        "PORTAL_RUN_POLLER_IN_WEB": "true",
    }
    command = [sys.executable, "-m", "uvicorn", "--factory", "app.main:create_app"]
    command += ["--host", "127.0.0.1", "--port", str(port), "--no-access-log"]
    command += ["--log-level", "warning"]
    with log.open("wb") as errors:
        server = subprocess.Popen(command, env=env, cwd=ROOT, stderr=errors)
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"{base}/healthz", timeout=2).status_code == 200:
                return server, base
        except httpx.HTTPError:
            time.sleep(0.3)
    raise RuntimeError("the portal did not start")


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
    rss: list[tuple[float, float]] = field(default_factory=list)


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
    client: httpx.AsyncClient, secret: str, job_ids: list[int], end: float, results: Results
) -> None:
    api = {"Authorization": f"Bearer {secret}"}
    turn = 0
    while time.monotonic() < end:
        job_id = job_ids[(turn * 7919) % len(job_ids)]
        turn += 1
        await _timed(results, "GET /jobs", client.get("/jobs"))
        await _timed(results, "GET /jobs/{id}", client.get(f"/jobs/{job_id}"))
        await _timed(results, "GET /jobs/{id}/status", client.get(f"/jobs/{job_id}/status"))
        await _timed(results, "GET /api/v1/jobs", client.get("/api/v1/jobs", headers=api))


async def sample_rss(pid: int, end: float, results: Results) -> None:
    started = time.monotonic()
    while time.monotonic() < end:
        results.rss.append((time.monotonic() - started, rss_mb(pid)))
        await asyncio.sleep(RSS_EVERY)
    results.rss.append((time.monotonic() - started, rss_mb(pid)))


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
    marks = results.rss
    print(
        "rss MB: " + " ".join(f"{t:.0f}s={mb:.0f}" for t, mb in marks[:: max(1, len(marks) // 12)])
    )
    print(
        f"rss start={marks[0][1]:.0f} MB end={marks[-1][1]:.0f} MB "
        f"max={max(m for _, m in marks):.0f} MB"
    )


async def run(
    base: str, pid: int, args: argparse.Namespace, ids: dict[str, list[int]], secrets: list[str]
) -> None:
    results = Results()
    logins = [LOGINS[i % len(LOGINS)] for i in range(args.users)]
    clients = [httpx.AsyncClient(base_url=base, timeout=60, limits=USER_LIMITS) for _ in logins]
    try:
        signed_in = await sign_in_all(list(zip(clients, logins, strict=True)))
        print(f"signed in {args.users} users in {signed_in:.1f} s")
        end = time.monotonic() + args.duration
        started = time.monotonic()
        users = [
            user_loop(client, secrets[i], ids[logins[i]], end, results)
            for i, client in enumerate(clients)
        ]
        await asyncio.gather(sample_rss(pid, end, results), *users)
        report(results, time.monotonic() - started, args.users, args.jobs)
    finally:
        await asyncio.gather(*(client.aclose() for client in clients))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration", type=float, default=180.0, help="seconds of load")
    parser.add_argument("--users", type=int, default=200)
    parser.add_argument("--jobs", type=int, default=20_000)
    args = parser.parse_args()
    url = database_url()
    fresh_database(url)
    env = {**os.environ, "PORTAL_DATABASE_URL": url, "PORTAL_CLUSTERS_FILE": CLUSTERS_FILE}
    subprocess.run(
        [sys.executable, "-m", "app.seed"], env=env, cwd=ROOT, check=True, stdout=subprocess.DEVNULL
    )
    ids, secrets = asyncio.run(seed(url, args.jobs, args.users))
    log = Path(tempfile.gettempdir()) / "bench_load_server.log"
    server, base = start_server(url, log)
    print(f"server log: {log}")
    try:
        asyncio.run(run(base, server.pid, args, ids, secrets))
    finally:
        server.terminate()
        server.wait(timeout=30)


if __name__ == "__main__":
    main()
