"""Interactive apps on their own origin, over real sockets: Connect on the portal's host sends
the owner to ``s-<id>.apps.localhost`` with a one-time ticket; that host trades it for a
cookie of its own and relays to the app (HTTP and WebSocket). Nobody else, no other session's
credential, no portal route and no portal cookie crosses between the two hosts."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from urllib.parse import parse_qs, urlsplit

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

from app.jobs.event_notes import requested
from app.jobs.repository import add_event
from app.models.base import utc_now
from app.models.interactive import InteractiveSession
from app.models.jobs import Job
from app.models.users import User
from app.scheduler.fake import FakeScheduler
from app.scheduler.registry import SchedulerRegistry
from app.web.settings import WebSettings
from tests.factories import fake_registry, make_job
from tests.integration.interactive.app_host_client import AppHost, open_app_host
from tests.integration.interactive.test_proxy import serve
from tests.integration.web.conftest import sign_in
from tests.world import World

SECRET = "jupyter-secret-" + "q" * 20
HOSTILE_COOKIES = [
    "portal_session=planted; Path=/",
    "__Host-portal_session=planted; Path=/; Secure",
    "PORTAL_CSRF=planted; Path=/",
    "hpcportal_app=planted; Path=/",
    "theme=dark; Domain=apps.localhost; Path=/apps/",
]


async def echo(request: Request) -> Response:
    if request.url.path.endswith("/upload"):
        return JSONResponse({"size": len(await request.body())})
    response = JSONResponse({"path": request.url.path, "headers": dict(request.headers)})
    if request.url.path.endswith("/plant"):
        for cookie in HOSTILE_COOKIES:
            response.headers.append("set-cookie", cookie)
    return response


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
    port: int
    alices: InteractiveSession
    carols: InteractiveSession

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"


def prefix(row: InteractiveSession) -> str:
    return f"/apps/sessions/{row.uuid}/"


def host_of(portal: Portal, row: InteractiveSession) -> str:
    return f"s-{uuid.UUID(row.uuid).hex}.apps.localhost:{portal.port}"


async def _running_session(
    session: AsyncSession, world: World, owner: User, port: int
) -> InteractiveSession:
    job = await make_job(session, owner, world.physics, state="running", node_list="127.0.0.1")
    row = InteractiveSession(
        uuid=str(uuid.uuid4()), owner_user_id=owner.id, job_id=job.id,
        app="jupyterlab", values={}, port=port, secret=SECRET,
    )  # fmt: skip
    session.add(row)
    return row


@pytest.fixture
async def portal(app: FastAPI, session: AsyncSession, world: World) -> AsyncIterator[Portal]:
    async with serve(fake_jupyter()) as jupyter_port, serve(app) as portal_port:
        alices = await _running_session(session, world, world.alice, jupyter_port)
        carols = await _running_session(session, world, world.carol, jupyter_port)
        await session.commit()
        yield Portal(portal_port, alices, carols)


@asynccontextmanager
async def _browser(portal: Portal, login: str | None) -> AsyncIterator[httpx.AsyncClient]:
    """A client on the portal's host (127.0.0.1), signed in as ``login``."""
    async with httpx.AsyncClient(base_url=portal.url, trust_env=False, timeout=30) as client:
        if login is not None:
            await sign_in(client, login)
        yield client


def app_host(portal: Portal, row: InteractiveSession, client: httpx.AsyncClient) -> AppHost:
    return AppHost(portal.url, host_of(portal, row), client)


async def connected(portal: Portal, browser: httpx.AsyncClient, row: InteractiveSession) -> AppHost:
    return await open_app_host(portal.url, browser, f"{prefix(row)}lab/tree?x=1")


async def test_connect_sends_the_owner_to_the_sessions_own_host_with_a_ticket(
    portal: Portal,
) -> None:
    async with _browser(portal, "alice") as alice:
        sent = await alice.get(f"{prefix(portal.alices)}lab/tree?x=1")

    assert sent.status_code == 303, sent.text
    location = urlsplit(sent.headers["location"])
    assert location.scheme == "http" and location.netloc == host_of(portal, portal.alices)
    assert location.path == "/_portal/connect"
    query = parse_qs(location.query)
    assert query["next"] == [f"{prefix(portal.alices)}lab/tree?x=1"] and query["ticket"]
    assert SECRET not in sent.text and "set-cookie" not in sent.headers


async def test_the_ticket_becomes_a_host_only_cookie_that_opens_the_app(portal: Portal) -> None:
    async with _browser(portal, "alice") as alice:
        sent = await alice.get(f"{prefix(portal.alices)}lab/tree?x=1")
        host = app_host(portal, portal.alices, alice)
        redeemed = await host.redeem(sent.headers["location"])
        response = await host.get(f"{prefix(portal.alices)}lab/tree")
        replayed = await AppHost(portal.url, host.host, alice).redeem(sent.headers["location"])

    assert redeemed.headers["location"] == f"{prefix(portal.alices)}lab/tree?x=1"
    cookie = redeemed.headers["set-cookie"]
    assert cookie.startswith("hpcportal_app=")
    assert "HttpOnly" in cookie and "samesite=lax" in cookie.lower() and "Path=/" in cookie
    assert "domain" not in cookie.lower()
    assert response.status_code == 200, response.text
    seen = response.json()["headers"]
    assert seen["authorization"] == f"token {SECRET}"
    assert "hpcportal_app" not in seen.get("cookie", "")
    assert replayed.status_code == 403, "a ticket opens its session once"


@pytest.mark.parametrize("login", ["carol", "admin"])
async def test_no_one_else_gets_a_ticket_for_a_session(portal: Portal, login: str) -> None:
    async with _browser(portal, login) as other:
        response = await other.get(f"{prefix(portal.alices)}lab/tree")

    assert response.status_code == 404
    assert SECRET not in response.text and "location" not in response.headers


async def test_a_visitor_who_is_not_signed_in_is_sent_to_sign_in(portal: Portal) -> None:
    async with _browser(portal, None) as visitor:
        response = await visitor.get(f"{prefix(portal.alices)}lab/tree")

    assert response.status_code == 303
    assert response.headers["location"].startswith("/signin?next=")


async def test_one_sessions_credentials_open_no_other_session(portal: Portal) -> None:
    async with _browser(portal, "alice") as alice, _browser(portal, "carol") as carol:
        carols_host = await connected(portal, carol, portal.carols)
        carols_ticket = (await carol.get(f"{prefix(portal.carols)}lab")).headers["location"]
        alices_host = app_host(portal, portal.alices, alice)
        # Carol's ticket and Carol's cookie, on the host of Alice's session.
        ticket_elsewhere = await alices_host.redeem(carols_ticket)
        alices_host.cookie = carols_host.cookie
        cookie_elsewhere = await alices_host.get(f"{prefix(portal.alices)}lab")
        # Carol's own host, asked for the path of Alice's session.
        path_elsewhere = await carols_host.get(f"{prefix(portal.alices)}lab")

    assert ticket_elsewhere.status_code == 403 and "set-cookie" not in ticket_elsewhere.headers
    assert cookie_elsewhere.status_code == 403
    assert path_elsewhere.status_code == 404
    for refused in (ticket_elsewhere, cookie_elsewhere, path_elsewhere):
        assert SECRET not in refused.text


async def test_a_forged_or_missing_app_cookie_opens_nothing(portal: Portal) -> None:
    async with _browser(portal, "alice") as alice:
        host = await connected(portal, alice, portal.alices)
        name, value = host.cookie.split("=", 1)
        host.cookie = f"{name}={value[:-2]}xx"
        forged = await host.get(f"{prefix(portal.alices)}lab")
        # The portal's own session cookie means nothing on an app's host.
        host.cookie = f"portal_session={alice.cookies['portal_session']}"
        portal_cookie = await host.get(f"{prefix(portal.alices)}lab")

    assert forged.status_code == portal_cookie.status_code == 403


@pytest.mark.parametrize(
    "target",
    ["/dashboard", "/api/v1/me", "/settings/tokens", "/signin", "/healthz", "/static/app.css",
     "/", "/apps", "/apps/jupyterlab"],
)  # fmt: skip
async def test_an_apps_host_serves_no_portal_route(portal: Portal, target: str) -> None:
    async with _browser(portal, "alice") as alice:
        host = await connected(portal, alice, portal.alices)
        host.cookie += f"; portal_session={alice.cookies['portal_session']}"
        response = await host.get(target)
        bare = await AppHost(portal.url, f"apps.localhost:{portal.port}", alice).get(target)

    assert response.status_code == bare.status_code == 404
    assert "csrf" not in response.text.lower()


async def test_the_portal_ignores_an_app_hosts_cookie(portal: Portal) -> None:
    async with _browser(portal, "alice") as alice:
        host = await connected(portal, alice, portal.alices)
    async with _browser(portal, None) as visitor:
        headers = {"Cookie": host.cookie}
        me = await visitor.get("/api/v1/me", headers=headers)
        page = await visitor.get("/settings/tokens", headers=headers)

    assert me.status_code == 401
    assert page.status_code == 303 and page.headers["location"].startswith("/signin")


async def test_an_app_cannot_set_a_portal_cookie_or_one_for_other_hosts(portal: Portal) -> None:
    async with _browser(portal, "alice") as alice:
        host = await connected(portal, alice, portal.alices)
        response = await host.get(f"{prefix(portal.alices)}plant")

    assert response.status_code == 200
    assert response.headers.get_list("set-cookie") == ["theme=dark; Path=/apps/"]


async def test_a_post_from_another_site_is_refused_and_the_owners_own_passes(
    portal: Portal,
) -> None:
    async with _browser(portal, "alice") as alice:
        host = await connected(portal, alice, portal.alices)
        target = f"{prefix(portal.alices)}api/kernels"
        portal_page = await host.request("POST", target, Origin=portal.url)
        sibling = await host.request("POST", target, **{"Sec-Fetch-Site": "same-site"})
        own = await host.request("POST", target, Origin=f"http://{host.host}")

    assert portal_page.status_code == sibling.status_code == 403
    assert "Another site cannot act in your session." in portal_page.text
    assert own.status_code == 200


async def test_an_apps_host_streams_a_body_over_the_sites_limit_to_its_owners_app(
    portal: Portal,
) -> None:
    """The site's limit is for the portal's forms: an app's own uploads (a notebook, a data
    file) pass through its host whole, and only for the session's owner."""
    body = b"x" * (6 * 1024 * 1024)  # over the site's 4 MiB
    target = f"{prefix(portal.alices)}api/contents/upload"
    async with _browser(portal, "alice") as alice:
        host = await connected(portal, alice, portal.alices)
        own = await alice.post(
            f"{portal.url}{target}",
            content=body,
            headers={"Host": host.host, "Cookie": host.cookie, "Origin": host.origin},
        )
    async with _browser(portal, None) as stranger:
        anonymous = await stranger.post(
            f"{portal.url}{target}", content=body, headers={"Host": host.host}
        )

    assert own.status_code == 200, own.text
    assert own.json() == {"size": len(body)}
    assert anonymous.status_code == 403


async def _socket_reply(portal: Portal, host: str, cookie: str, origin: str, **more: str) -> str:
    url = f"ws://{host}{prefix(portal.alices)}api/kernels/k1/channels"
    headers = {"Cookie": cookie, **more}
    async with connect(
        url,
        additional_headers=headers,
        origin=origin,  # type: ignore[arg-type]
        host="127.0.0.1",
        port=portal.port,
    ) as socket:
        await socket.send("ping")
        return str(await socket.recv())


async def test_the_owners_websocket_reaches_the_app_on_its_host_and_no_one_elses_does(
    portal: Portal,
) -> None:
    async with _browser(portal, "alice") as alice, _browser(portal, "carol") as carol:
        alices = await connected(portal, alice, portal.alices)
        carols = await connected(portal, carol, portal.carols)
        alices_portal = f"portal_session={alice.cookies['portal_session']}"

    own_origin = f"http://{alices.host}"
    assert await _socket_reply(portal, alices.host, alices.cookie, own_origin) == (
        f"ping (token {SECRET})"
    )
    refused = [
        (alices.host, carols.cookie, own_origin),  # another session's cookie
        (alices.host, alices.cookie, portal.url),  # a portal page
        (alices.host, alices.cookie, f"http://{carols.host}"),  # a sibling session's page
        (alices.host, alices_portal, own_origin),  # the portal's cookie
        (f"127.0.0.1:{portal.port}", alices_portal, portal.url),  # the portal's host
    ]
    for host, cookie, origin in refused:
        with pytest.raises(InvalidStatus) as refusal:
            await _socket_reply(portal, host, cookie, origin)
        assert refusal.value.response.status_code == 403, (host, origin)


# Behind a TLS front the page's origin is https://s-…, while the front speaks ws:// to the portal.
@pytest.mark.parametrize("web_settings", [WebSettings(trusted_proxies=("127.0.0.1",))])
async def test_behind_a_tls_front_the_owners_websocket_passes_the_origin_check(
    portal: Portal,
) -> None:
    async with _browser(portal, "alice") as alice:
        host = await connected(portal, alice, portal.alices)
    forwarded = {"X-Forwarded-Proto": "https", "X-Forwarded-For": "203.0.113.9"}

    reply = await _socket_reply(portal, host.host, host.cookie, f"https://{host.host}", **forwarded)
    assert reply == f"ping (token {SECRET})"
    with pytest.raises(InvalidStatus) as refusal:
        await _socket_reply(portal, host.host, host.cookie, f"http://{host.host}", **forwarded)
    assert refusal.value.response.status_code == 403


@pytest.mark.parametrize("web_settings", [WebSettings(trusted_proxies=("127.0.0.1",))])
async def test_behind_a_tls_front_connect_leads_to_https_and_a_host_only_secure_cookie(
    portal: Portal,
) -> None:
    forwarded = {"X-Forwarded-Proto": "https", "X-Forwarded-For": "203.0.113.9"}
    async with _browser(portal, "alice") as alice:
        # Over TLS the portal's cookie has its __Host- name (signed in over TLS, as here).
        session_cookie = f"__Host-portal_session={alice.cookies['portal_session']}"
        alice.cookies.clear()
        sent = await alice.get(
            f"{prefix(portal.alices)}lab", headers={**forwarded, "Cookie": session_cookie}
        )
        location = urlsplit(sent.headers["location"])
        host = app_host(portal, portal.alices, alice)
        redeemed = await host.get(f"{location.path}?{location.query}", **forwarded)

    assert location.scheme == "https" and location.netloc == host.host
    cookie = redeemed.headers["set-cookie"]
    assert cookie.startswith("__Host-hpcportal_app=") and "Secure" in cookie
    assert "Path=/" in cookie and "domain" not in cookie.lower()


async def test_an_ended_session_is_no_longer_reachable(
    portal: Portal, session: AsyncSession
) -> None:
    async with _browser(portal, "alice") as alice:
        host = await connected(portal, alice, portal.alices)
        await session.execute(update(Job).values(state="cancelled"))
        await session.commit()
        on_host = await host.get(f"{prefix(portal.alices)}lab/tree")
        connect_again = await alice.get(f"{prefix(portal.alices)}lab/tree")

    assert on_host.status_code == connect_again.status_code == 404


async def test_a_deactivated_owners_app_cookie_stops_working(
    portal: Portal, session: AsyncSession, world: World
) -> None:
    async with _browser(portal, "alice") as alice:
        host = await connected(portal, alice, portal.alices)
        await session.execute(update(User).where(User.id == world.alice.id).values(is_active=False))
        await session.commit()
        response = await host.get(f"{prefix(portal.alices)}lab/tree")

    assert response.status_code == 404


NAVIGATE = {"Sec-Fetch-Mode": "navigate"}
FETCH = {"Sec-Fetch-Mode": "cors"}


async def test_an_ended_sessions_tab_shows_the_portals_page_with_relaunch(
    portal: Portal, session: AsyncSession
) -> None:
    async with _browser(portal, "alice") as alice:
        host = await connected(portal, alice, portal.alices)
        add_event(
            session,
            portal.alices.job_id,
            "running",
            "running",
            reason=requested("cancel", "alice"),
            source="user",
        )
        await session.commit()
        ending = await host.get(
            f"{prefix(portal.alices)}lab/tree", **{"Sec-Fetch-Mode": "navigate"}
        )
        await session.execute(update(Job).values(state="cancelled"))
        await session.commit()
        ended = await host.get(f"{prefix(portal.alices)}lab/tree", **{"Sec-Fetch-Mode": "navigate"})
        fetched = await host.get(
            f"{prefix(portal.alices)}api/contents", **{"Sec-Fetch-Mode": "cors"}
        )

    assert ending.status_code == 410 and "session is ending" in ending.text
    assert ended.status_code == 410 and "<h1>Your JupyterLab session has ended</h1>" in ended.text
    relaunch = f"{portal.url}/apps/jupyterlab?relaunch={portal.alices.id}"
    assert f'<a href="{relaunch}">Relaunch with the same values</a>' in ended.text
    assert fetched.status_code == 404 and "<html" not in fetched.text


async def test_a_session_ended_for_idleness_is_not_served_and_its_tab_says_why(
    portal: Portal, session: AsyncSession
) -> None:
    async with _browser(portal, "alice") as alice:
        host = await connected(portal, alice, portal.alices)
        await session.execute(
            update(InteractiveSession)
            .where(InteractiveSession.id == portal.alices.id)
            .values(idle_ended_at=utc_now())
        )
        await session.commit()
        ending = await host.get(f"{prefix(portal.alices)}lab/tree", **NAVIGATE)
        await session.execute(update(Job).values(state="cancelled"))
        await session.commit()
        ended = await host.get(f"{prefix(portal.alices)}lab/tree", **NAVIGATE)

    assert ending.status_code == 410 and "session is ending" in ending.text
    assert ended.status_code == 410 and "nobody had used it for a while" in ended.text
