"""The portal's /apps/sessions/… routes over real sockets: the owner reaches their running
app (HTTP and WebSocket) with its secret added; anyone else, another site or an ended session
does not."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy import update
from sqlalchemy.ext.asyncio import AsyncSession
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route, WebSocketRoute
from starlette.websockets import WebSocket
from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus

from app.models import InteractiveSession, Job
from app.scheduler.fake import FakeScheduler
from app.scheduler.registry import SchedulerRegistry
from tests.factories import fake_registry, make_job
from tests.integration.interactive.test_proxy import serve
from tests.integration.web.conftest import sign_in
from tests.world import World

SECRET = "jupyter-secret-" + "q" * 20


async def echo(request: Request) -> Response:
    return JSONResponse({"path": request.url.path, "headers": dict(request.headers)})


async def echo_socket(websocket: WebSocket) -> None:
    await websocket.accept()
    sent = await websocket.receive_text()
    await websocket.send_text(f"{sent} ({websocket.headers.get('authorization')})")
    await websocket.close()


def fake_jupyter() -> Starlette:
    return Starlette(
        routes=[
            Route("/apps/sessions/{rest:path}", echo, methods=["GET", "POST"]),
            WebSocketRoute("/apps/sessions/{rest:path}", echo_socket),
        ]
    )


@pytest.fixture
def registry() -> SchedulerRegistry:
    return fake_registry(FakeScheduler())


@dataclass
class Portal:
    url: str
    prefix: str


@pytest.fixture
async def portal(app: FastAPI, session: AsyncSession, world: World) -> AsyncIterator[Portal]:
    async with serve(fake_jupyter()) as jupyter_port, serve(app) as portal_port:
        job = await make_job(
            session, world.alice, world.physics, state="running", node_list="127.0.0.1"
        )
        row = InteractiveSession(
            uuid=str(uuid.uuid4()), owner_user_id=world.alice.id, job_id=job.id,
            app="jupyterlab", values={}, port=jupyter_port, secret=SECRET,
        )  # fmt: skip
        session.add(row)
        await session.commit()
        yield Portal(f"http://127.0.0.1:{portal_port}", f"/apps/sessions/{row.uuid}/")


@asynccontextmanager
async def _browser(portal: Portal, login: str | None) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=portal.url) as client:
        if login is not None:
            await sign_in(client, login)
        yield client


async def test_the_owner_reaches_the_app_with_its_secret_and_without_portal_cookies(
    portal: Portal,
) -> None:
    async with _browser(portal, "alice") as alice:
        response = await alice.get(f"{portal.prefix}lab/tree")

    assert response.status_code == 200, response.text
    seen = response.json()
    assert seen["path"] == f"{portal.prefix}lab/tree"
    assert seen["headers"]["authorization"] == f"token {SECRET}"
    assert "portal_session" not in seen["headers"].get("cookie", "")


@pytest.mark.parametrize("login", ["carol", "admin"])
async def test_anyone_else_finds_no_such_session(portal: Portal, login: str) -> None:
    async with _browser(portal, login) as other:
        response = await other.get(f"{portal.prefix}lab/tree")

    assert response.status_code == 404
    assert SECRET not in response.text


async def test_a_visitor_who_is_not_signed_in_is_sent_to_sign_in(portal: Portal) -> None:
    async with _browser(portal, None) as visitor:
        response = await visitor.get(f"{portal.prefix}lab/tree")

    assert response.status_code == 303
    assert response.headers["location"].startswith("/signin?next=")


async def test_a_post_from_another_site_is_refused_and_the_owners_own_passes(
    portal: Portal,
) -> None:
    async with _browser(portal, "alice") as alice:
        forged = await alice.post(
            f"{portal.prefix}api/kernels", headers={"Origin": "https://evil.example"}
        )
        sibling = await alice.post(
            f"{portal.prefix}api/kernels", headers={"Sec-Fetch-Site": "same-site"}
        )
        own = await alice.post(f"{portal.prefix}api/kernels", headers={"Origin": portal.url})

    assert forged.status_code == sibling.status_code == 403
    assert "Another site cannot act in your session." in forged.text
    assert own.status_code == 200


async def _socket_reply(portal: Portal, cookie: str, origin: str) -> str:
    url = portal.url.replace("http", "ws") + f"{portal.prefix}api/kernels/k1/channels"
    headers = {"Cookie": cookie}
    async with connect(url, additional_headers=headers, origin=origin) as socket:  # type: ignore[arg-type]
        await socket.send("ping")
        return str(await socket.recv())


async def test_the_owners_websocket_reaches_the_app_and_no_one_elses_does(
    portal: Portal,
) -> None:
    async with _browser(portal, "alice") as alice, _browser(portal, "carol") as carol:
        alices = f"portal_session={alice.cookies['portal_session']}"
        carols = f"portal_session={carol.cookies['portal_session']}"

    assert await _socket_reply(portal, alices, portal.url) == f"ping (token {SECRET})"
    # Refused before the handshake completes: the browser sees the socket fail.
    for cookie, origin in ((carols, portal.url), (alices, "https://evil.example")):
        with pytest.raises(InvalidStatus) as refused:
            await _socket_reply(portal, cookie, origin)
        assert refused.value.response.status_code == 403


async def test_an_ended_session_is_no_longer_reachable(
    portal: Portal, session: AsyncSession
) -> None:
    async with _browser(portal, "alice") as alice:
        await session.execute(update(Job).values(state="cancelled"))
        await session.commit()
        response = await alice.get(f"{portal.prefix}lab/tree")

    assert response.status_code == 404
