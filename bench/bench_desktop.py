"""What the desktop's VNC bridge costs: input-to-frame latency, and the web process's memory.

    .venv/bin/python bench/bench_desktop.py [--samples 200] [--desktops 10]

Needs the local cluster (``scripts/dev-cluster up``) with the desktop's packages on its compute
node (``scripts/dev-cluster apps``). Launches, as ``alice``, one real desktop (TigerVNC, XFCE,
websockify) through the portal (served in-process by uvicorn, SQLite in a temporary
directory, poller on) and ends it at the end (its Slurm job is cancelled, also when the
benchmark fails).

1. Latency: one RFB client straight to websockify on the node (answering the VNC password
   itself) and one through the portal's bridge (as noVNC: no password, the portal answers
   it); each sample moves the pointer and asks for the 32x32 square under it, and times
   until that frame has arrived whole; the two alternate. Raw encoding only, so the bytes
   counted are the same on both paths.
2. Memory: a second portal as its own process (``uvicorn --factory app.main:create_app``,
   poller off) with DESKTOPS desktop rows that point at stand-in VNC servers behind
   WebSockets in another process (``desktop_stand_ins.py``); VmRSS of the portal's
   process signed in and idle, then with every desktop open through its bridge, each moving
   its pointer every 100 ms and receiving a 64x64 frame (16 KB) every 100 ms.

Part 2 runs while the desktop starts on the node (it measures memory, not time).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import secrets
import struct
import sys
import tempfile
import time
import uuid
from asyncio.subprocess import Process
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import httpx
from bench_proxy import (
    CLUSTER,
    CLUSTERS_FILE,
    LOGIN,
    ROOT,
    _cancel_in_slurm,
    _csrf,
    _end,
    _fresh_database,
    _interleaved,
    _line,
    _rss_mb,
    _serve_in_process,
    _sign_in,
    _start_portal,
    _stop,
    _wait_ended,
    _wait_running,
)
from sqlalchemy import select
from websockets.asyncio.client import ClientConnection, connect
from websockets.typing import Subprotocol

from app.config import Settings
from app.db import create_engine, create_sessionmaker, unit_of_work
from app.interactive import rfb
from app.models.base import utc_now
from app.models.interactive import InteractiveSession
from app.models.jobs import Job
from app.models.projects import Project
from app.models.users import User
from tests.integration.interactive.app_host_client import AppHost, open_app_host

BINARY = [Subprotocol("binary")]
RAW = 0
SQUARE = 32
TRAFFIC_SECONDS = 10.0
EVERY = 0.1


# --- an RFB client over a WebSocket ----------------------------------------------------------


class RfbClient:
    """Just enough of a VNC viewer: exact reads over WebSocket frames, whole updates."""

    def __init__(self, socket_: ClientConnection) -> None:
        self.socket = socket_
        self.buffer = bytearray()
        self.bytes_per_pixel = 4

    async def read(self, count: int) -> bytes:
        while len(self.buffer) < count:
            data = await self.socket.recv()
            self.buffer += data if isinstance(data, bytes) else data.encode("latin-1")
        data = bytes(self.buffer[:count])
        del self.buffer[:count]
        return data

    async def send(self, data: bytes) -> None:
        await self.socket.send(data)

    async def initialise(self) -> None:
        """ClientInit (shared), ServerInit, then Raw encoding only."""
        await self.send(b"\x01")
        _width, _height, bits = struct.unpack(">HHB", await self.read(5))
        await self.read(15)
        (name_length,) = struct.unpack(">I", await self.read(4))
        await self.read(name_length)
        self.bytes_per_pixel = bits // 8
        await self.send(struct.pack(">BxHi", rfb.SET_ENCODINGS, 1, RAW))

    async def next_update(self) -> None:
        """Reads server messages until one framebuffer update has arrived whole."""
        while True:
            (kind,) = await self.read(1)
            if kind == 0:
                (rects,) = struct.unpack(">xH", await self.read(3))
                for _ in range(rects):
                    _x, _y, width, height, encoding = struct.unpack(">HHHHi", await self.read(12))
                    if encoding == RAW:
                        await self.read(width * height * self.bytes_per_pixel)
                return
            if kind == 1:  # colour map entries
                _first, count = struct.unpack(">xHH", await self.read(5))
                await self.read(6 * count)
            elif kind == 3:  # server cut text
                (length,) = struct.unpack(">xxxI", await self.read(7))
                await self.read(length)
            elif kind != 2:  # 2: bell, nothing follows
                raise rfb.RfbError(f"unexpected server message {kind}")


def _pointer_and_request(index: int) -> bytes:
    x, y = 200 + (index % 2) * 300, 300
    pointer = struct.pack(">BBHH", rfb.POINTER_EVENT, 0, x, y)
    square = struct.pack(
        ">BBHHHH", rfb.UPDATE_REQUEST, 0, x - SQUARE // 2, y - SQUARE // 2, SQUARE, SQUARE
    )
    return pointer + square


async def _sample(client: RfbClient, counter: list[int]) -> float:
    counter[0] += 1
    started = time.perf_counter()
    await client.send(_pointer_and_request(counter[0]))
    async with asyncio.timeout(30):
        await client.next_update()
    return time.perf_counter() - started


@asynccontextmanager
async def _direct(node: str, port: int, secret: str) -> AsyncIterator[RfbClient]:
    async with connect(
        f"ws://{node}:{port}/", subprotocols=BINARY, proxy=None, max_size=None
    ) as socket_:
        client = RfbClient(socket_)
        await rfb.sign_in_to_server(client.read, client.send, secret)
        await client.initialise()
        yield client


@asynccontextmanager
async def _through_portal(port: int, host: AppHost, prefix: str) -> AsyncIterator[RfbClient]:
    """As noVNC: the portal offers no security and answers the VNC server's password."""
    async with connect(
        f"ws://{host.host}{prefix}websockify",
        additional_headers={"Cookie": host.cookie},
        origin=host.origin,  # type: ignore[arg-type]
        subprotocols=BINARY,
        proxy=None,
        max_size=None,
        host="127.0.0.1",
        port=port,
    ) as socket_:
        client = RfbClient(socket_)
        if await client.read(12) != rfb.VERSION:
            raise rfb.RfbError("the portal does not speak RFB 3.8")
        await client.send(rfb.VERSION)
        await client.read(2)
        await client.send(bytes([rfb.SECURITY_NONE]))
        if await client.read(4) != bytes(4):
            raise rfb.RfbError("the portal refused the stream")
        await client.initialise()
        yield client


# --- part 2: stand-in desktops and a portal process of its own -------------------------------


async def _start_stand_ins(count: int, secret: str) -> tuple[Process, list[int]]:
    process = await asyncio.create_subprocess_exec(
        sys.executable, str(Path(__file__).with_name("desktop_stand_ins.py")), str(count), secret,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL, cwd=ROOT,
    )  # fmt: skip
    assert process.stdout is not None
    try:
        line = await asyncio.wait_for(process.stdout.readline(), 30)
    except TimeoutError:
        line = b""
    ports = [int(port) for port in line.split()]
    if len(ports) != count:
        await _stop(process)
        raise RuntimeError("the stand-in desktops did not start")
    return process, ports


async def _insert_desktops(database_url: str, ports: list[int], secret: str) -> list[str]:
    """One running desktop of alice per port, on 127.0.0.1, as the poller would leave it."""
    engine = create_engine(database_url)
    uuids = []
    try:
        async with unit_of_work(create_sessionmaker(engine)) as db:
            alice = (await db.scalars(select(User).where(User.login == LOGIN))).one()
            project = (await db.scalars(select(Project).where(Project.name == "physics"))).one()
            for port in ports:
                job = Job(uuid=str(uuid.uuid4()), owner_user_id=alice.id, project_id=project.id,
                          cluster=CLUSTER, script="", name="Desktop session", state="running",
                          node_list="127.0.0.1", started_at=utc_now(),
                          time_limit_minutes=60)  # fmt: skip
                db.add(job)
                await db.flush()
                row = InteractiveSession(uuid=str(uuid.uuid4()), owner_user_id=alice.id,
                                         job_id=job.id, app="desktop", values={}, port=port,
                                         secret=secret, ready_at=utc_now())  # fmt: skip
                db.add(row)
                uuids.append(row.uuid)
    finally:
        await engine.dispose()
    return uuids


async def _viewer(
    portal_port: int, host: AppHost, prefix: str, stop: asyncio.Event, frames: list[int]
) -> None:
    """One noVNC through the portal: moves its pointer every 100 ms, counts frames."""
    async with _through_portal(portal_port, host, prefix) as client:
        index = 0
        while not stop.is_set():
            index += 1
            await client.send(struct.pack(">BBHH", rfb.POINTER_EVENT, 0, index % 500, 300))
            async with asyncio.timeout(10):
                await client.next_update()
            frames[0] += 1
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), EVERY)


async def _memory(folder: Path, desktops: int) -> tuple[float, float]:
    database_url = await _fresh_database(folder, "memory.db")
    secret = secrets.token_urlsafe(24)
    stand_ins, ports = await _start_stand_ins(desktops, secret)
    portal: Process | None = None
    try:
        uuids = await _insert_desktops(database_url, ports, secret)
        portal, url = await _start_portal(database_url, folder)
        portal_port = int(url.rsplit(":", 1)[1])
        async with httpx.AsyncClient(base_url=url, trust_env=False, timeout=60) as browser:
            await _sign_in(browser)
            await asyncio.sleep(1)
            idle = _rss_mb(portal.pid)
            prefixes = [f"/apps/sessions/{session_uuid}/" for session_uuid in uuids]
            hosts = [await open_app_host(url, browser, prefix) for prefix in prefixes]
            stop = asyncio.Event()
            frames = [[0] for _ in prefixes]
            tasks = [
                asyncio.create_task(_viewer(portal_port, host, prefix, stop, counted))
                for host, prefix, counted in zip(hosts, prefixes, frames, strict=True)
            ]
            try:
                done, _ = await asyncio.wait(tasks, timeout=TRAFFIC_SECONDS)
                for task in done:
                    task.result()  # a viewer that ended early has failed
                busy = _rss_mb(portal.pid)
            finally:
                stop.set()
                await asyncio.gather(*tasks, return_exceptions=True)
            if min(counted[0] for counted in frames) == 0:
                raise RuntimeError("some desktop carried no frames")
        return idle, busy
    finally:
        if portal is not None:
            await _stop(portal)
        await _stop(stand_ins)


# --- the run ---------------------------------------------------------------------------------


async def _launch_desktop(browser: httpx.AsyncClient, project_id: int) -> None:
    page = await browser.get("/apps/desktop")
    form = {"csrf_token": _csrf(page.text), "project_id": str(project_id), "cores": "1",
            "memory_gb": "2", "time_minutes": "30"}  # fmt: skip
    launched = await browser.post("/apps/desktop", data=form)
    if launched.status_code != 303:
        raise RuntimeError(f"launching the desktop failed: {launched.status_code}")


async def _side_by_side(
    direct: RfbClient, bridged: RfbClient, samples: int
) -> tuple[list[float], list[float]]:
    counter = [0]
    return await _interleaved(
        samples, lambda: _sample(direct, counter), lambda: _sample(bridged, counter)
    )


async def _latency(
    portal_url: str, browser: httpx.AsyncClient, database_url: str, samples: int
) -> tuple[list[float], list[float]]:
    session = await _wait_running(browser, database_url)
    host = await open_app_host(portal_url, browser, session.prefix)
    portal_port = int(portal_url.rsplit(":", 1)[1])
    deadline = time.monotonic() + 60
    while True:  # websockify is written down before Xvnc draws its first frame
        try:
            async with (
                _direct(session.node, session.port, session.secret) as direct,
                _through_portal(portal_port, host, session.prefix) as bridged,
            ):
                return await _side_by_side(direct, bridged, samples)
        except (OSError, rfb.RfbError) as error:
            if time.monotonic() > deadline:
                raise RuntimeError(f"the desktop did not answer: {error}") from error
            await asyncio.sleep(1)


async def run(samples: int, desktops: int) -> list[str]:
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
                await _launch_desktop(browser, project_id)
                try:
                    idle, busy = await _memory(folder, desktops)
                    direct, bridged = await _latency(portal_url, browser, database_url, samples)
                finally:
                    ended = await _end_own(browser, database_url)
        finally:
            if not ended:
                alive = await _wait_ended(database_url, 0)
                if alive:
                    await _cancel_in_slurm(alive)
    return [
        _line("desktop input-to-frame", direct, bridged),
        f"web RSS idle {idle:.1f} MB, {desktops} desktops open {busy:.1f} MB "
        f"(+{(busy - idle) / desktops:.2f} MB per desktop)",
    ]


async def _end_own(browser: httpx.AsyncClient, database_url: str) -> bool:
    """Ends the benchmark's desktop through the portal; True once Slurm has ended it."""
    engine = create_engine(database_url)
    async with create_sessionmaker(engine)() as db:
        row = (await db.scalars(select(InteractiveSession))).unique().first()
    await engine.dispose()
    if row is None:
        return True
    await _end(browser, row.id)
    return not await _wait_ended(database_url, 30)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=200, help="input-to-frame samples each")
    parser.add_argument("--desktops", type=int, default=10, help="desktops held open (part 2)")
    args = parser.parse_args()
    for line in asyncio.run(run(args.samples, args.desktops)):
        print(line)


if __name__ == "__main__":
    # Only the figures: the portal, httpx and uvicorn log at INFO.
    logging.basicConfig(level=logging.WARNING)
    main()
