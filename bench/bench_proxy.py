"""What the interactive-app proxy costs: HTTP and kernel WebSocket latency, and memory.

    .venv/bin/python bench/bench_proxy.py [--requests 300] [--messages 200] [--sessions 20]

Needs the local cluster (``scripts/dev-cluster up``) with JupyterLab on its compute node
(``scripts/dev-cluster apps``). Launches, as ``alice``, one real JupyterLab session through the
portal (served in-process by uvicorn, SQLite in a temporary directory, poller on) and ends it
at the end (its Slurm job is cancelled, also when the benchmark fails).

1. HTTP: ``GET <session>/api/status``, alternately straight to JupyterLab on its node (with
   the session's token) and through the portal on the session's own host (its cookie, got as
   a browser gets it: the portal's redirect and the ticket's exchange); p50/p95 of each. The
   floor under the portal's figure: a bare relay in the same process (uvicorn and a streamed
   httpx request, nothing else), timed alternately with each.
2. WebSocket: one kernel, one channel socket straight to it and one through the portal;
   ``kernel_info_request`` -> matching ``kernel_info_reply`` round trips, alternately.
   Both paths include ~40 ms that is Jupyter's own: its kernel WebSocket is not TCP_NODELAY,
   so the reply written after the "busy" status waits for the reader's delayed ACK.
3. Memory: a second portal as its own process (``uvicorn --factory app.main:create_app``,
   poller off) with SESSIONS session rows that point at stand-in app servers in another
   process (``proxy_apps.py``); VmRSS of the portal's process signed in and idle, then with
   one WebSocket (1 KB each 100 ms, echoed) and one streaming response open per session.

Part 3 runs while JupyterLab starts (it measures memory, not time); 1 and 2 run after it.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import os
import re
import secrets
import socket
import statistics
import sys
import tempfile
import time
import uuid
from asyncio.subprocess import Process
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import uvicorn
from portal_process import free_port
from sqlalchemy import select
from starlette.applications import Starlette
from starlette.background import BackgroundTask
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route
from websockets.asyncio.client import ClientConnection, connect

from app.config import Settings
from app.db import create_engine, create_sessionmaker, migrate_to_head, unit_of_work
from app.jobs import states
from app.main import create_app
from app.models.base import utc_now
from app.models.interactive import InteractiveSession
from app.models.jobs import Job
from app.models.projects import Project
from app.models.users import User
from app.scheduler.config import load_clusters
from app.scheduler.registry import build_adapter
from app.seed import demo_password, seed_demo
from app.vocabulary.job_states import JobStateName
from tests.integration.interactive.app_host_client import AppHost, open_app_host

ROOT = Path(__file__).resolve().parent.parent
CLUSTERS_FILE = Path(os.environ.get("PORTAL_CLUSTERS_FILE", "/var/lib/hpcportal-dev/clusters.toml"))
CLUSTER = "testcluster"
LOGIN = "alice"
CSRF = re.compile(r'name="csrf_token" value="([^"]+)"')
STARTUP_SECONDS = 240
WARMUP = 20
TRAFFIC_SECONDS = 10.0
MESSAGE = "m" * 1024
EVERY = 0.1


# --- shared helpers -----------------------------------------------------------------------


def _listening_socket() -> socket.socket:
    """A socket for uvicorn's ``sockets=``, named as TCP: asyncio sets TCP_NODELAY only on
    connections whose socket says IPPROTO_TCP, and without it Nagle's algorithm and delayed
    ACKs add ~40 ms to most keep-alive responses (``uvicorn --host --port`` does not suffer it).
    """
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.bind(("127.0.0.1", 0))
    return sock


def _csrf(html: str) -> str:
    match = CSRF.search(html)
    if match is None:
        raise RuntimeError("page has no CSRF field")
    return match.group(1)


async def _fresh_database(folder: Path, name: str) -> str:
    url = f"sqlite+aiosqlite:///{folder / name}"
    migrate_to_head(url)
    engine = create_engine(url)
    try:
        await seed_demo(create_sessionmaker(engine), [CLUSTER])
    finally:
        await engine.dispose()
    return url


async def _sign_in(client: httpx.AsyncClient) -> None:
    form = await client.get("/signin")
    data = {"login": LOGIN, "password": demo_password(LOGIN), "csrf_token": _csrf(form.text)}
    answer = await client.post("/signin", data=data)
    if answer.status_code != 303:
        raise RuntimeError(f"sign-in failed: {answer.status_code}")


def _percentiles(samples: list[float]) -> tuple[float, float]:
    """p50 and p95 in ms."""
    p95 = statistics.quantiles(samples, n=100, method="inclusive")[94]
    return statistics.median(samples) * 1000, p95 * 1000


def _line(label: str, direct: list[float], portal: list[float], through: str = "portal") -> str:
    d50, d95 = _percentiles(direct)
    p50, p95 = _percentiles(portal)
    return (
        f"{label} direct p50 {d50:.1f} ms p95 {d95:.1f} ms | "
        f"{through} p50 {p50:.1f} ms p95 {p95:.1f} ms | "
        f"ratio p50 {p50 / d50:.1f}x (+{p50 - d50:.1f} ms)"
    )


async def _interleaved(
    count: int, direct: Callable[[], Awaitable[float]], portal: Callable[[], Awaitable[float]]
) -> tuple[list[float], list[float]]:
    """``count`` timings of each, alternating which goes first so load falls on both alike."""
    direct_times, portal_times = await _rotated(count, [direct, portal])
    return direct_times, portal_times


async def _rotated(count: int, paths: list[Callable[[], Awaitable[float]]]) -> list[list[float]]:
    """``count`` timings of each path, each round starting one path later than the last."""
    for _ in range(WARMUP):
        for path in paths:
            await path()
    times: list[list[float]] = [[] for _ in paths]
    for index in range(count):
        for step in range(len(paths)):
            which = (index + step) % len(paths)
            times[which].append(await paths[which]())
    return times


# --- parts 1 and 2: a real JupyterLab session ----------------------------------------------


@dataclass
class Session:
    id: int
    uuid: str
    node: str
    port: int
    secret: str

    @property
    def prefix(self) -> str:
        return f"/apps/sessions/{self.uuid}/"


@asynccontextmanager
async def _serving(app: Any, **options: Any) -> AsyncIterator[str]:
    """``app`` served by uvicorn in this process on a free local port, until the block ends."""
    sock = _listening_socket()
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", access_log=False, **options))
    serving = asyncio.create_task(server.serve(sockets=[sock]))
    try:
        # uvicorn reports start-up only through this flag, so it is polled.
        while not server.started:
            if serving.done():
                serving.result()
            await asyncio.sleep(0.02)
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        server.should_exit = True
        await serving
        sock.close()


@asynccontextmanager
async def _serve_in_process(settings: Settings) -> AsyncIterator[str]:
    app = create_app(settings)
    async with (
        app.router.lifespan_context(app),
        _serving(app, lifespan="off", timeout_graceful_shutdown=1) as url,
    ):
        yield url


async def _launch(browser: httpx.AsyncClient, project_id: int) -> None:
    page = await browser.get("/apps/jupyterlab")
    form = {"csrf_token": _csrf(page.text), "project_id": str(project_id), "cores": "1",
            "memory_gb": "1", "time_minutes": "30"}  # fmt: skip
    launched = await browser.post("/apps/jupyterlab", data=form)
    if launched.status_code != 303:
        raise RuntimeError(f"launching JupyterLab failed: {launched.status_code}")


async def _wait_running(browser: httpx.AsyncClient, database_url: str) -> Session:
    """Looks at /apps (which asks a starting session's server) until the row is running."""
    engine = create_engine(database_url)
    try:
        sessionmaker = create_sessionmaker(engine)
        deadline = time.monotonic() + STARTUP_SECONDS
        while time.monotonic() < deadline:
            await browser.get("/apps")
            async with sessionmaker() as db:
                row = (await db.scalars(select(InteractiveSession))).unique().one()
                job = row.job
                if states.is_terminal(job.state):
                    raise RuntimeError(f"the JupyterLab job ended: {job.state} {job.reason}")
                ready = row.ready_at is not None and job.state == JobStateName.RUNNING
                if ready and row.port and row.secret and job.node_list:
                    return Session(row.id, row.uuid, job.node_list, row.port, row.secret)
            await asyncio.sleep(1)
    finally:
        await engine.dispose()
    raise RuntimeError(f"JupyterLab was not running after {STARTUP_SECONDS} s")


async def _end(browser: httpx.AsyncClient, session_id: int) -> None:
    page = await browser.get("/apps")
    ended = await browser.post(
        f"/apps/sessions/{session_id}/end", data={"csrf_token": _csrf(page.text)}
    )
    if ended.status_code != 303:
        raise RuntimeError(f"ending the session failed: {ended.status_code}")


async def _wait_ended(database_url: str, seconds: float) -> list[str]:
    """Slurm ids of the benchmark's own jobs still not finished after ``seconds`` (the poller
    records it). Only jobs this portal submitted: the poller also adds rows for alice's jobs
    submitted elsewhere (``submitted_outside``), which belong to whoever else uses the cluster.
    """
    engine = create_engine(database_url)
    own = select(Job).where(Job.submitted_outside.is_(False), Job.slurm_job_id.is_not(None))
    try:
        sessionmaker = create_sessionmaker(engine)
        deadline = time.monotonic() + seconds
        while True:
            async with sessionmaker() as db:
                jobs = (await db.scalars(own)).all()
                alive = [
                    job.slurm_job_id
                    for job in jobs
                    if job.slurm_job_id and not states.is_terminal(job.state)
                ]
            if not alive or time.monotonic() >= deadline:
                return alive
            await asyncio.sleep(1)
    finally:
        await engine.dispose()


async def _cancel_in_slurm(slurm_ids: list[str]) -> None:
    """The last resort when the portal could not end the session: scancel (as alice) the
    benchmark's own job, never another of alice's."""
    adapter = build_adapter(load_clusters(CLUSTERS_FILE)[CLUSTER], "ssh")
    try:
        await adapter.cancel(slurm_ids, LOGIN)
    except Exception:
        # Already ended between the last look and now, or Slurm refused: say which.
        logging.getLogger("bench_proxy").exception("scancel %s failed", " ".join(slurm_ids))
    finally:
        await adapter.close()


@asynccontextmanager
async def _bare_relay(upstream: str, headers: dict[str, str]) -> AsyncIterator[str]:
    """The floor under the portal's relay: the same server (uvicorn, in this process) and the
    same client (httpx, streamed) passing a GET to the app with its token, and nothing else: no
    middleware, no cookie, no database."""
    client = httpx.AsyncClient(base_url=upstream, headers=headers, trust_env=False, timeout=60)

    async def relay(request: Request) -> Response:
        outgoing = client.build_request("GET", request.url.path)
        answer = await client.send(outgoing, stream=True)
        return StreamingResponse(
            answer.aiter_raw(),
            status_code=answer.status_code,
            headers={"content-type": answer.headers.get("content-type", "")},
            background=BackgroundTask(answer.aclose),
        )

    bare = Starlette(routes=[Route("/{path:path}", relay)])
    try:
        async with _serving(bare) as url:
            yield url
    finally:
        await client.aclose()


def _timer(client: httpx.AsyncClient, path: str) -> Callable[[], Awaitable[float]]:
    async def timed() -> float:
        started = time.perf_counter()
        response = await client.get(path)
        elapsed = time.perf_counter() - started
        response.raise_for_status()
        return elapsed

    return timed


async def _http_latency(
    portal_url: str, browser: httpx.AsyncClient, session: Session, count: int
) -> tuple[tuple[list[float], list[float]], list[float]]:
    """((direct, through the portal), through the bare relay), in seconds."""
    path = f"{session.prefix}api/status"
    headers = {"Authorization": f"token {session.secret}"}
    direct_base = f"http://{session.node}:{session.port}"
    async with (
        httpx.AsyncClient(base_url=direct_base, headers=headers, trust_env=False) as app,
        _bare_relay(direct_base, headers) as bare_url,
        httpx.AsyncClient(base_url=bare_url, trust_env=False) as bare,
    ):
        host = await open_app_host(portal_url, browser, session.prefix)
        paths = [_timer(app, path), _timer(host, path), _timer(bare, path)]
        direct_times, portal_times, bare_times = await _rotated(count, paths)
        return (direct_times, portal_times), bare_times


def _kernel_info_request() -> tuple[str, str]:
    msg_id = uuid.uuid4().hex
    header = {"msg_id": msg_id, "session": uuid.uuid4().hex, "username": LOGIN,
              "msg_type": "kernel_info_request", "version": "5.3"}  # fmt: skip
    message = {"header": header, "parent_header": {}, "metadata": {}, "content": {},
               "channel": "shell", "buffers": []}  # fmt: skip
    return msg_id, json.dumps(message)


async def _round_trip(socket_: ClientConnection) -> float:
    msg_id, message = _kernel_info_request()
    started = time.perf_counter()
    await socket_.send(message)
    async with asyncio.timeout(30):
        while True:
            reply = json.loads(await socket_.recv())
            if (
                reply.get("msg_type") == "kernel_info_reply"
                and reply.get("parent_header", {}).get("msg_id") == msg_id
            ):
                return time.perf_counter() - started


async def _ws_latency(
    portal_url: str, browser: httpx.AsyncClient, session: Session, count: int
) -> tuple[list[float], list[float]]:
    host = await open_app_host(portal_url, browser, session.prefix)
    started = await host.request(
        "POST", f"{session.prefix}api/kernels", json={"name": "python3"}, Origin=host.origin
    )
    if started.status_code != 201:
        raise RuntimeError(f"starting a kernel failed: {started.status_code}")
    channels = f"{session.prefix}api/kernels/{started.json()['id']}/channels"
    direct_url = f"ws://{session.node}:{session.port}{channels}"
    async with (
        connect(
            direct_url,
            additional_headers={"Authorization": f"token {session.secret}"},
            proxy=None,
            max_size=None,
            open_timeout=60,
        ) as direct_socket,
        connect(
            f"ws://{host.host}{channels}",
            additional_headers={"Cookie": host.cookie},
            origin=host.origin,  # type: ignore[arg-type]
            proxy=None,
            max_size=None,
            open_timeout=60,
            host="127.0.0.1",
            port=host.port,
        ) as portal_socket,
    ):
        return await _interleaved(
            count, lambda: _round_trip(direct_socket), lambda: _round_trip(portal_socket)
        )


# --- part 3: memory of a separate web process ----------------------------------------------


def _rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmRSS for process {pid}")


async def _start_apps(count: int) -> tuple[Process, list[int]]:
    apps = await asyncio.create_subprocess_exec(
        sys.executable,
        str(Path(__file__).with_name("proxy_apps.py")),
        str(count),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
        cwd=ROOT,
    )
    assert apps.stdout is not None
    try:
        line = await asyncio.wait_for(apps.stdout.readline(), 30)
    except TimeoutError:
        line = b""
    ports = [int(port) for port in line.split()]
    if len(ports) != count:
        await _stop(apps)
        raise RuntimeError("the stand-in app servers did not start")
    return apps, ports


async def _stop(process: Process) -> None:
    if process.returncode is None:
        process.terminate()
    try:
        await asyncio.wait_for(process.wait(), 15)
    except TimeoutError:
        process.kill()
        await process.wait()


async def _insert_sessions(database_url: str, ports: list[int]) -> list[str]:
    """One running session of alice per port, on 127.0.0.1, as the poller would leave it."""
    engine = create_engine(database_url)
    uuids = []
    try:
        async with unit_of_work(create_sessionmaker(engine)) as db:
            alice = (await db.scalars(select(User).where(User.login == LOGIN))).one()
            project = (await db.scalars(select(Project).where(Project.name == "physics"))).one()
            for port in ports:
                job = Job(uuid=str(uuid.uuid4()), owner_user_id=alice.id, project_id=project.id,
                          cluster=CLUSTER, script="", name="JupyterLab session", state="running",
                          node_list="127.0.0.1", started_at=utc_now(),
                          time_limit_minutes=60)  # fmt: skip
                db.add(job)
                await db.flush()
                row = InteractiveSession(uuid=str(uuid.uuid4()), owner_user_id=alice.id,
                                         job_id=job.id, app="jupyterlab", values={}, port=port,
                                         secret=secrets.token_urlsafe(32),
                                         ready_at=utc_now())  # fmt: skip
                db.add(row)
                uuids.append(row.uuid)
    finally:
        await engine.dispose()
    return uuids


async def _start_portal(database_url: str, folder: Path) -> tuple[Process, str]:
    """``uvicorn --factory app.main:create_app`` as its own process; its output goes to a file."""
    port = free_port()
    env = {key: value for key, value in os.environ.items() if not key.startswith("PORTAL_")}
    env |= {
        "PORTAL_ENV": "dev",
        "PORTAL_DATABASE_URL": database_url,
        "PORTAL_CLUSTERS_FILE": str(CLUSTERS_FILE),
        "PORTAL_RUN_POLLER_IN_WEB": "false",
    }
    argv = ["-m", "uvicorn", "--factory", "app.main:create_app", "--host", "127.0.0.1",
            "--port", str(port), "--no-access-log", "--log-level", "warning"]  # fmt: skip
    log_path = folder / "portal.log"
    with log_path.open("wb") as log:
        portal = await asyncio.create_subprocess_exec(
            sys.executable, *argv, cwd=ROOT, env=env, stdout=log, stderr=asyncio.subprocess.STDOUT
        )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    async with httpx.AsyncClient(trust_env=False) as probe:
        while time.monotonic() < deadline and portal.returncode is None:
            with contextlib.suppress(httpx.HTTPError):
                if (await probe.get(f"{url}/healthz")).status_code == 200:
                    return portal, url
            await asyncio.sleep(0.2)
    await _stop(portal)
    raise RuntimeError(f"the portal process did not start:\n{log_path.read_text()[-2000:]}")


async def _socket_traffic(
    host: AppHost, path: str, stop: asyncio.Event, counts: list[int], index: int
) -> None:
    async with connect(
        f"ws://{host.host}{path}",
        additional_headers={"Cookie": host.cookie},
        origin=host.origin,  # type: ignore[arg-type]
        proxy=None,
        host="127.0.0.1",
        port=host.port,
    ) as ws:
        while not stop.is_set():
            await ws.send(MESSAGE)
            if await asyncio.wait_for(ws.recv(), 10) != MESSAGE:
                raise RuntimeError("the echo differs from the message")
            counts[index] += 1
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), EVERY)


async def _stream_traffic(
    host: AppHost, path: str, stop: asyncio.Event, counts: list[int], index: int
) -> None:
    headers = {"Host": host.host, "Cookie": host.cookie}
    url = f"{host.portal_url}{path}"
    async with host.client.stream("GET", url, headers=headers, timeout=30) as response:
        response.raise_for_status()
        async for chunk in response.aiter_raw():
            counts[index] += len(chunk)
            if stop.is_set():
                return


async def _memory(folder: Path, sessions: int) -> tuple[float, float]:
    database_url = await _fresh_database(folder, "memory.db")
    apps, ports = await _start_apps(sessions)
    portal: Process | None = None
    try:
        uuids = await _insert_sessions(database_url, ports)
        portal, url = await _start_portal(database_url, folder)
        limits = httpx.Limits(max_connections=None, max_keepalive_connections=None)
        async with httpx.AsyncClient(base_url=url, trust_env=False, limits=limits) as browser:
            await _sign_in(browser)
            await asyncio.sleep(1)
            idle = _rss_mb(portal.pid)
            stop = asyncio.Event()
            echoes, streamed = [0] * sessions, [0] * sessions
            tasks = []
            for index, session_uuid in enumerate(uuids):
                prefix = f"/apps/sessions/{session_uuid}/"
                host = await open_app_host(url, browser, prefix)
                traffic = _socket_traffic(host, f"{prefix}ws", stop, echoes, index)
                stream = _stream_traffic(host, f"{prefix}stream", stop, streamed, index)
                tasks += [asyncio.create_task(traffic), asyncio.create_task(stream)]
            try:
                done, _ = await asyncio.wait(tasks, timeout=TRAFFIC_SECONDS)
                for task in done:
                    task.result()  # a task that ended early has failed
                busy = _rss_mb(portal.pid)
            finally:
                stop.set()
                for task in tasks:
                    task.cancel()
                await asyncio.gather(*tasks, return_exceptions=True)
            if min(echoes) == 0 or min(streamed) == 0:
                raise RuntimeError("some session carried no traffic")
        return idle, busy
    finally:
        if portal is not None:
            await _stop(portal)
        await _stop(apps)


# --- the run ---------------------------------------------------------------------------------


async def run(requests: int, messages: int, sessions: int) -> list[str]:
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        database_url = await _fresh_database(folder, "portal.db")
        settings = Settings(env="dev", database_url=database_url, clusters_file=CLUSTERS_FILE,
                            run_poller_in_web=True, poll_interval=1)  # fmt: skip
        ended = False
        try:
            async with (
                _serve_in_process(settings) as portal_url,
                httpx.AsyncClient(base_url=portal_url, trust_env=False, timeout=60) as browser,
            ):
                await _sign_in(browser)
                engine = create_engine(database_url)
                async with create_sessionmaker(engine)() as db:
                    project = await db.scalars(select(Project).where(Project.name == "physics"))
                    project_id = project.one().id
                await engine.dispose()
                await _launch(browser, project_id)
                session: Session | None = None
                try:
                    # Memory is measured while JupyterLab starts on the node.
                    idle, busy = await _memory(folder, sessions)
                    session = await _wait_running(browser, database_url)
                    http, bare = await _http_latency(portal_url, browser, session, requests)
                    ws = await _ws_latency(portal_url, browser, session, messages)
                finally:
                    if session is None:
                        engine = create_engine(database_url)
                        async with create_sessionmaker(engine)() as db:
                            row = (await db.scalars(select(InteractiveSession))).unique().first()
                        await engine.dispose()
                        session_id = row.id if row is not None else None
                    else:
                        session_id = session.id
                    if session_id is not None:
                        await _end(browser, session_id)
                        ended = not await _wait_ended(database_url, 30)
        finally:
            if not ended:
                alive = await _wait_ended(database_url, 0)
                if alive:
                    await _cancel_in_slurm(alive)
    return [
        _line("proxy http  ", *http),
        _line("floor http  ", http[0], bare, through="bare relay"),
        _line("proxy ws    ", *ws),
        f"web RSS idle {idle:.1f} MB, {sessions} sessions open {busy:.1f} MB "
        f"(+{(busy - idle) / sessions:.2f} MB per session)",
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=300, help="HTTP requests each way")
    parser.add_argument("--messages", type=int, default=200, help="kernel round trips each way")
    parser.add_argument("--sessions", type=int, default=20, help="sessions held open (part 3)")
    args = parser.parse_args()
    for line in asyncio.run(run(args.requests, args.messages, args.sessions)):
        print(line)


if __name__ == "__main__":
    # Only the figures: the portal, httpx and uvicorn log at INFO.
    logging.basicConfig(level=logging.WARNING)
    main()
