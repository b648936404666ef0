"""A desktop session over real sockets, with a fake VNC server behind a fake websockify: the
owner's noVNC reaches it with no password of its own and types; a viewer the owner chose
sees the same stream but nothing it sends that would act reaches the server; anyone else,
and a viewer once revoked, finds no session. While anyone has it open, the bridge notes so
on the session's row, and when they leave (the desktop's idle clock)."""

from __future__ import annotations

import asyncio
import struct
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import datetime

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy.ext.asyncio import AsyncSession
from starlette.applications import Starlette
from starlette.routing import WebSocketRoute
from starlette.websockets import WebSocket, WebSocketDisconnect
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

from app.errors import ValidationFailed
from app.interactive import rfb, viewers
from app.interactive.definitions import AppDefinition, load_definitions
from app.models.base import utc_now
from app.models.interactive import InteractiveSession
from app.scheduler.fake import FakeScheduler
from app.scheduler.registry import SchedulerRegistry
from app.users.service import actor_for
from app.web import desktop
from tests.factories import fake_registry, make_job
from tests.integration.interactive.app_host_client import AppHost, open_app_host
from tests.integration.interactive.test_proxy import serve
from tests.integration.web.conftest import sign_in
from tests.world import World

SECRET = "desktop-secret-" + "d" * 20
SERVER_INIT = struct.pack(">HH16B", 1280, 800, *bytes(16)) + struct.pack(">I", 4) + b"Desk"
KEY = struct.pack(">BBHI", rfb.KEY_EVENT, 1, 0, 0x61)
POINTER = struct.pack(">BBHH", rfb.POINTER_EVENT, 1, 10, 20)
UPDATE = struct.pack(">BBHHHH", rfb.UPDATE_REQUEST, 1, 0, 0, 1280, 800)
CLIPBOARD = struct.pack(">BxxxI", rfb.CLIENT_CUT_TEXT, 6) + b"copied"
RESIZE = struct.pack(">BxHHBx", rfb.SET_DESKTOP_SIZE, 1366, 768, 1) + bytes(16)


@dataclass
class FakeVnc:
    """websockify and Xvnc in one: RFB 3.8 with VNC authentication over a WebSocket."""

    received: list[bytes] = field(default_factory=list)
    shared_flags: list[int] = field(default_factory=list)

    async def serve_socket(self, websocket: WebSocket) -> None:
        await websocket.accept(subprotocol="binary")
        buffer = bytearray()

        async def read(count: int) -> bytes:
            while len(buffer) < count:
                buffer.extend(await websocket.receive_bytes())
            data = bytes(buffer[:count])
            del buffer[:count]
            return data

        await websocket.send_bytes(rfb.VERSION)
        assert await read(12) == rfb.VERSION
        await websocket.send_bytes(bytes([1, rfb.SECURITY_VNC]))
        assert await read(1) == bytes([rfb.SECURITY_VNC])
        challenge = bytes(range(16))
        await websocket.send_bytes(challenge)
        accepted = await read(16) == rfb.vnc_auth_response(SECRET, challenge)
        await websocket.send_bytes(struct.pack(">I", 0 if accepted else 1))
        if not accepted:
            await websocket.close()
            return
        self.shared_flags.append((await read(1))[0])
        await websocket.send_bytes(SERVER_INIT)
        try:
            while True:
                data = await websocket.receive_bytes()
                self.received.append(data)
                await websocket.send_bytes(b"frame")
        except WebSocketDisconnect:
            return


@pytest.fixture
def registry() -> SchedulerRegistry:
    return fake_registry(FakeScheduler())


@dataclass
class Portal:
    port: int
    vnc: FakeVnc
    desktop: InteractiveSession

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def prefix(self) -> str:
        return f"/apps/sessions/{self.desktop.uuid}/"


@pytest.fixture
async def portal(app: FastAPI, session: AsyncSession, world: World) -> AsyncIterator[Portal]:
    vnc = FakeVnc()
    websockify = Starlette(routes=[WebSocketRoute("/", vnc.serve_socket)])
    async with serve(websockify) as vnc_port, serve(app) as portal_port:
        job = await make_job(
            session, world.alice, world.physics, state="running", node_list="127.0.0.1"
        )
        row = InteractiveSession(
            uuid=str(uuid.uuid4()), owner_user_id=world.alice.id, job_id=job.id,
            app="desktop", values={}, port=vnc_port, secret=SECRET,
        )  # fmt: skip
        session.add(row)
        await session.commit()
        yield Portal(portal_port, vnc, row)


@asynccontextmanager
async def _browser(portal: Portal, login: str) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=portal.url, trust_env=False, timeout=30) as client:
        await sign_in(client, login)
        yield client


@asynccontextmanager
async def _novnc(portal: Portal, host: AppHost) -> AsyncIterator[ClientConnection]:
    """noVNC's side of the stream: the portal offers no security, then the server's init."""
    async with connect(
        f"ws://{host.host}{portal.prefix}{desktop.STREAM_PATH}",
        additional_headers={"Cookie": host.cookie},
        origin=host.origin,  # type: ignore[arg-type]
        subprotocols=["binary"],  # type: ignore[list-item]
        host="127.0.0.1",
        port=portal.port,
    ) as socket:
        assert await socket.recv() == rfb.VERSION
        await socket.send(rfb.VERSION)
        assert await socket.recv() == bytes([1, rfb.SECURITY_NONE])
        await socket.send(bytes([rfb.SECURITY_NONE]))
        assert await socket.recv() == bytes(4)
        await socket.send(b"\x00")  # asks for the desktop alone; the portal shares it
        assert await socket.recv() == SERVER_INIT
        yield socket


async def _share(session: AsyncSession, world: World, portal: Portal, login: str) -> int:
    alice = await actor_for(session, world.alice)
    viewer = await viewers.share(session, alice, portal.desktop.id, login, _definitions())
    await session.commit()
    return viewer.id


def _definitions() -> dict[str, AppDefinition]:
    return load_definitions()


async def test_the_owner_opens_novnc_on_the_sessions_host_and_types_without_a_password(
    portal: Portal,
) -> None:
    async with _browser(portal, "alice") as alice:
        host = await open_app_host(portal.url, alice, portal.prefix)
        opened = await host.get(portal.prefix)
        page = await host.get(opened.headers["location"].split("#")[0])
        escape = await host.get(f"{portal.prefix}novnc/../../../../etc/passwd")
        async with _novnc(portal, host) as socket:
            await socket.send(KEY + CLIPBOARD + RESIZE + UPDATE)
            assert await socket.recv() == b"frame"

    assert opened.status_code == 303
    assert "resize=remote" in opened.headers["location"]
    assert "view_only=false" in opened.headers["location"]
    assert page.status_code == 200 and "noVNC" in page.text
    assert "frame-ancestors 'none'" in page.headers["content-security-policy"]
    assert escape.status_code == 404
    assert portal.vnc.shared_flags == [1]
    assert b"".join(portal.vnc.received) == KEY + CLIPBOARD + RESIZE + UPDATE


async def test_a_chosen_viewer_watches_but_nothing_they_send_acts_on_the_desktop(
    portal: Portal, session: AsyncSession, world: World
) -> None:
    await _share(session, world, portal, "carol")
    async with _browser(portal, "carol") as carol:
        host = await open_app_host(portal.url, carol, portal.prefix)
        opened = await host.get(portal.prefix)
        async with _novnc(portal, host) as socket:
            await socket.send(KEY + POINTER + CLIPBOARD + RESIZE + UPDATE + KEY)
            assert await socket.recv() == b"frame"

    assert "view_only=true" in opened.headers["location"]
    assert "resize=scale" in opened.headers["location"]
    assert b"".join(portal.vnc.received) == UPDATE


async def test_anyone_the_owner_did_not_choose_finds_no_session(
    portal: Portal, session: AsyncSession, world: World
) -> None:
    await _share(session, world, portal, "carol")
    async with _browser(portal, "dave") as dave, _browser(portal, "bob") as bob:
        answers = [await client.get(portal.prefix) for client in (dave, bob)]

    assert [answer.status_code for answer in answers] == [404, 404]


async def test_a_revoked_viewer_loses_the_stream_and_the_link(
    portal: Portal, session: AsyncSession, world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(desktop, "RECHECK_SECONDS", 0.2)
    viewer_id = await _share(session, world, portal, "carol")
    async with _browser(portal, "carol") as carol:
        host = await open_app_host(portal.url, carol, portal.prefix)
        async with _novnc(portal, host) as socket:
            alice = await actor_for(session, world.alice)
            await viewers.revoke(session, alice, portal.desktop.id, viewer_id)
            await session.commit()
            with pytest.raises(ConnectionClosed):
                async with asyncio.timeout(10):
                    while True:
                        await socket.recv()
        again = await carol.get(portal.prefix)

    assert again.status_code == 404


async def test_only_a_running_desktop_of_ones_own_is_shared_and_with_a_real_user(
    portal: Portal, session: AsyncSession, world: World
) -> None:
    alice = await actor_for(session, world.alice)
    carol = await actor_for(session, world.carol)
    jupyter_job = await make_job(session, world.alice, world.physics, state="running")
    jupyter = InteractiveSession(
        uuid=str(uuid.uuid4()), owner_user_id=world.alice.id, job_id=jupyter_job.id,
        app="jupyterlab", values={},
    )  # fmt: skip
    session.add(jupyter)
    await session.flush()
    definitions = _definitions()

    with pytest.raises(ValidationFailed):
        await viewers.share(session, alice, jupyter.id, "carol", definitions)
    with pytest.raises(ValidationFailed) as nobody:
        await viewers.share(session, alice, portal.desktop.id, "nobody", definitions)
    assert "login" in nobody.value.fields
    with pytest.raises(ValidationFailed):
        await viewers.share(session, alice, portal.desktop.id, "alice", definitions)
    with pytest.raises(Exception, match="No such session"):
        await viewers.share(session, carol, portal.desktop.id, "dave", definitions)


async def _viewed_at(session: AsyncSession, portal: Portal) -> datetime | None:
    row = await session.get(InteractiveSession, portal.desktop.id, populate_existing=True)
    assert row is not None
    await session.commit()  # the next read sees what the portal wrote since
    return row.viewed_at


async def _viewed_after(session: AsyncSession, portal: Portal, moment: datetime) -> datetime:
    async with asyncio.timeout(10):
        while (found := await _viewed_at(session, portal)) is None or found <= moment:
            await asyncio.sleep(0.05)
    return found


@pytest.mark.parametrize("login", ["alice", "carol"])
async def test_the_bridge_notes_while_someone_has_the_desktop_open_and_when_they_left(
    portal: Portal,
    session: AsyncSession,
    world: World,
    monkeypatch: pytest.MonkeyPatch,
    login: str,
) -> None:
    monkeypatch.setattr(desktop, "RECHECK_SECONDS", 0.05)
    monkeypatch.setattr(desktop, "VIEWED_EVERY_SECONDS", 0.2)
    if login != "alice":
        await _share(session, world, portal, login)
    before = await _viewed_at(session, portal)
    async with _browser(portal, login) as browser:
        host = await open_app_host(portal.url, browser, portal.prefix)
        opened_at = utc_now()
        async with _novnc(portal, host) as socket:
            at_connect = await _viewed_at(session, portal)
            assert at_connect is not None
            # Still open: noted again, though the viewer sends nothing.
            again = await _viewed_after(session, portal, at_connect)
            await socket.send(UPDATE)
            assert await socket.recv() == b"frame"
            # From here only the close is noted.
            monkeypatch.setattr(desktop, "VIEWED_EVERY_SECONDS", 3600.0)
            await asyncio.sleep(0.3)
            left_at = utc_now()
        at_close = await _viewed_after(session, portal, left_at)

    assert before is None
    assert opened_at <= at_connect < again < left_at < at_close
    # Once closed, nothing more is noted: the idle clock runs from when they left.
    await asyncio.sleep(0.5)
    assert await _viewed_at(session, portal) == at_close
