"""The interactive apps' proxy over real sockets: a browser-like client talks to a front app
(the portal's part, served by uvicorn) that relays to an app server (uvicorn too), each on its
own port on 127.0.0.1, so real HTTP and real WebSocket traffic crosses both hops."""

from __future__ import annotations

import asyncio
import hashlib
import json
import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest
import uvicorn
from starlette.applications import Starlette
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, PlainTextResponse, Response, StreamingResponse
from starlette.routing import Route, WebSocketRoute
from starlette.types import ASGIApp, Message
from starlette.websockets import WebSocket
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

from app.interactive.upstream import Upstream, UpstreamUnavailable, upstream_client
from app.web.app_relay import proxy_http, proxy_websocket
from tests.portal import free_port

PREFIX = "/apps/sessions/7/"
DOWN_PREFIX = "/apps/sessions/8/"
TOKEN = "app-secret-0123456789abcdef"
PORTAL_COOKIES = frozenset({"portal_session", "portal_csrf"})
METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]
JUPYTER_PROTOCOL = "v1.kernel.websocket.jupyter.org"
# Every wait is bounded, so a proxy that buffers or hangs fails the test instead of stalling.
WAIT = 5.0
UPLOAD_CHUNK = 1024 * 1024
UPLOAD_CHUNKS = 50


@dataclass
class AppState:
    """What the app's server saw, and the switches a test holds it on; fresh for each test."""

    release: asyncio.Event = field(default_factory=asyncio.Event)
    stream_closed: asyncio.Event = field(default_factory=asyncio.Event)
    upload_started: asyncio.Event = field(default_factory=asyncio.Event)
    closes: asyncio.Queue[tuple[int, str]] = field(default_factory=asyncio.Queue)


def _target(scope: dict[str, object]) -> str:
    raw_path = scope["raw_path"]
    query = scope["query_string"]
    assert isinstance(raw_path, bytes) and isinstance(query, bytes)
    return raw_path.decode() + ("?" + query.decode() if query else "")


async def echo(request: Request) -> Response:
    body = await request.body()
    seen = {"method": request.method, "target": _target(request.scope), "body": body.decode()}
    return JSONResponse({**seen, "headers": request.headers.items()})


async def upload(request: Request) -> Response:
    state: AppState = request.app.state.test
    digest, size = hashlib.sha256(), 0
    async for chunk in request.stream():
        if chunk:
            state.upload_started.set()
        digest.update(chunk)
        size += len(chunk)
    length = request.headers.get("content-length")
    return JSONResponse({"size": size, "sha256": digest.hexdigest(), "content_length": length})


async def slow(request: Request) -> Response:
    state: AppState = request.app.state.test

    async def body() -> AsyncIterator[bytes]:
        try:
            yield b"first\n"
            await state.release.wait()
            yield b"second\n"
        finally:
            state.stream_closed.set()

    return StreamingResponse(body(), media_type="text/plain")


async def redirect(request: Request) -> Response:
    here = f"http://127.0.0.1:{request.app.state.port}{PREFIX}lab?reset=1#top"
    response = Response(status_code=302, headers={"location": request.query_params.get("to", here)})
    response.set_cookie("_xsrf", "2|abc", path=PREFIX)
    response.set_cookie("username-node", "alice", path=PREFIX, httponly=True)
    return response


async def hop(request: Request) -> Response:
    headers = {"connection": "x-app-hop", "x-app-hop": "1", "keep-alive": "timeout=5"}
    return PlainTextResponse("ok", headers={**headers, "x-kept": "yes"})


async def app_socket(websocket: WebSocket) -> None:
    """Echoes; "headers" asks what the handshake carried, "close:<code>:<reason>" closes."""
    state: AppState = websocket.app.state.test
    offered = websocket.scope.get("subprotocols", [])
    await websocket.accept(subprotocol=JUPYTER_PROTOCOL if JUPYTER_PROTOCOL in offered else None)
    while True:
        message = await websocket.receive()
        text = message.get("text")
        if message["type"] == "websocket.disconnect":
            await state.closes.put((message["code"], message.get("reason") or ""))
            return
        if text == "headers":
            seen = {"target": _target(websocket.scope), "headers": websocket.headers.items()}
            await websocket.send_text(json.dumps(seen))
        elif text is not None and text.startswith("close:"):
            _, code, reason = text.split(":", 2)
            await websocket.close(int(code), reason)
            return
        elif text is not None:
            await websocket.send_text(text)
        else:
            await websocket.send_bytes(message["bytes"])


def app_server() -> Starlette:
    routes = [
        Route(f"{PREFIX}upload", upload, methods=["POST"]),
        Route(f"{PREFIX}slow", slow),
        Route(f"{PREFIX}redirect", redirect),
        Route(f"{PREFIX}hop", hop),
        WebSocketRoute(f"{PREFIX}ws", app_socket),
        Route(PREFIX + "{rest:path}", echo, methods=METHODS),
    ]
    return Starlette(routes=routes)


def front(live: Upstream, down: Upstream, client: httpx.AsyncClient) -> Starlette:
    """The portal's part: a session's prefix relays to its app; 502 when it is not there."""

    def relay_http(prefix: str, upstream: Upstream) -> Route:
        async def endpoint(request: Request) -> Response:
            try:
                return await proxy_http(request, upstream, client, PORTAL_COOKIES)
            except UpstreamUnavailable as exc:
                return PlainTextResponse(str(exc), status_code=502)

        return Route(prefix + "{path:path}", endpoint, methods=METHODS)

    def relay_ws(prefix: str, upstream: Upstream) -> WebSocketRoute:
        async def endpoint(websocket: WebSocket) -> None:
            await proxy_websocket(websocket, upstream, PORTAL_COOKIES)

        return WebSocketRoute(prefix + "{path:path}", endpoint)

    routes = [
        relay_http(PREFIX, live),
        relay_http(DOWN_PREFIX, down),
        relay_ws(PREFIX, live),
        relay_ws(DOWN_PREFIX, down),
    ]
    return Starlette(routes=routes)


@asynccontextmanager
async def serve(app: ASGIApp) -> AsyncIterator[int]:
    """Serves ``app`` with uvicorn on a free port of 127.0.0.1 in this event loop."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    # A socket left open by a failing test must not hold the teardown.
    # As every launcher runs the portal (--no-proxy-headers): forwarded headers are the
    # portal's own business, never uvicorn's.
    config = uvicorn.Config(
        app, log_level="warning", lifespan="off", timeout_graceful_shutdown=1, proxy_headers=False
    )
    server = uvicorn.Server(config)
    task = asyncio.create_task(server.serve(sockets=[sock]))
    try:
        async with asyncio.timeout(WAIT):
            while not server.started:
                assert not task.done(), task.exception()
                await asyncio.sleep(0.01)
        yield sock.getsockname()[1]
    finally:
        server.should_exit = True
        await task
        sock.close()


@dataclass
class Servers:
    front: str
    app: Starlette
    live: Upstream
    down: Upstream
    client: httpx.AsyncClient


@pytest.fixture(scope="module")
async def servers() -> AsyncIterator[Servers]:
    app = app_server()
    async with serve(app) as app_port, upstream_client() as client:
        app.state.port = app_port
        live = Upstream("127.0.0.1", app_port, "Authorization", f"token {TOKEN}")
        down = Upstream("127.0.0.1", free_port(), "Authorization", f"token {TOKEN}")
        async with serve(front(live, down, client)) as front_port:
            yield Servers(f"127.0.0.1:{front_port}", app, live, down, client)


@pytest.fixture
def state(servers: Servers) -> AppState:
    fresh = AppState()
    servers.app.state.test = fresh
    return fresh


@pytest.fixture
async def browser(servers: Servers) -> AsyncIterator[httpx.AsyncClient]:
    base = f"http://{servers.front}"
    async with httpx.AsyncClient(base_url=base, timeout=WAIT, trust_env=False) as client:
        yield client


@asynccontextmanager
async def browser_socket(
    servers: Servers, path: str, **options: Any
) -> AsyncIterator[ClientConnection]:
    """A WebSocket from the browser's side, with no size limit of its own."""
    uri = f"ws://{servers.front}{path}"
    websocket = await connect(uri, proxy=None, max_size=None, open_timeout=WAIT, **options)
    async with websocket:
        yield websocket


async def test_method_path_and_query_reach_the_app_as_sent(browser: httpx.AsyncClient) -> None:
    # An escaped slash is part of a file name in Jupyter: decoding it would change the path.
    target = f"{PREFIX}api/contents/a%2Fb%20c.ipynb?x=1&y=%2F&z=a+b"
    response = await browser.patch(target, content=b'{"name": "n"}')
    assert response.status_code == 200
    seen = response.json()
    assert (seen["method"], seen["target"], seen["body"]) == ("PATCH", target, '{"name": "n"}')


async def test_the_app_gets_its_token_its_cookies_and_its_own_origin(
    servers: Servers, browser: httpx.AsyncClient
) -> None:
    headers = {
        "authorization": "Bearer the-browsers-own",
        "cookie": "portal_session=s1; _xsrf=2|x; portal_csrf=c3; theme=dark",
        "origin": f"http://{servers.front}",
        "x-custom": "kept",
    }
    response = await browser.get(f"{PREFIX}echo", headers=headers)
    seen = response.json()["headers"]
    assert [value for name, value in seen if name == "authorization"] == [f"token {TOKEN}"]
    assert [value for name, value in seen if name == "cookie"] == ["_xsrf=2|x; theme=dark"]
    authority = f"127.0.0.1:{servers.live.port}"
    assert dict(seen)["origin"] == f"http://{authority}"
    assert dict(seen)["host"] == authority
    assert dict(seen)["x-custom"] == "kept"


async def test_hop_by_hop_and_forwarded_headers_stop_at_the_proxy(
    browser: httpx.AsyncClient,
) -> None:
    headers = {
        "connection": "keep-alive, x-hop",
        "x-hop": "1",
        "keep-alive": "timeout=5",
        "te": "trailers",
        "proxy-authorization": "Basic eDp5",
        "x-forwarded-for": "6.6.6.6",
        "x-forwarded-host": "elsewhere.example",
        "forwarded": "for=6.6.6.6",
    }
    seen = dict((await browser.get(f"{PREFIX}echo", headers=headers)).json()["headers"])
    for name in ["x-hop", "keep-alive", "te", "proxy-authorization", "forwarded"]:
        assert name not in seen
    assert not [name for name in seen if name.startswith("x-forwarded-")]
    assert "x-hop" not in seen.get("connection", "")

    response = await browser.get(f"{PREFIX}hop")
    assert response.headers["x-kept"] == "yes"
    assert "x-app-hop" not in response.headers
    assert "keep-alive" not in response.headers


async def test_a_large_upload_streams_through_to_the_app(
    state: AppState, browser: httpx.AsyncClient
) -> None:
    expected = hashlib.sha256()

    async def body() -> AsyncIterator[bytes]:
        for index in range(UPLOAD_CHUNKS):
            chunk = hashlib.sha256(index.to_bytes(4, "big")).digest() * (UPLOAD_CHUNK // 32)
            expected.update(chunk)
            yield chunk
            if index == 0:
                # Only a proxy that streams lets the app read before the upload has ended.
                await asyncio.wait_for(state.upload_started.wait(), WAIT)

    size = UPLOAD_CHUNK * UPLOAD_CHUNKS
    headers = {"content-length": str(size)}
    response = await browser.post(f"{PREFIX}upload", content=body(), headers=headers)
    assert response.status_code == 200
    assert response.json() == {
        "size": size,
        "sha256": expected.hexdigest(),
        "content_length": str(size),
    }


async def _joined(chunks: AsyncIterator[bytes]) -> bytes:
    return b"".join([chunk async for chunk in chunks])


async def test_a_streamed_response_reaches_the_browser_as_it_comes(
    state: AppState, browser: httpx.AsyncClient
) -> None:
    async with browser.stream("GET", f"{PREFIX}slow") as response:
        chunks = response.aiter_raw()
        # The app sends the rest only once the browser has the first part: a buffering proxy
        # would wait for the end and time out here.
        assert await asyncio.wait_for(anext(chunks), WAIT) == b"first\n"
        state.release.set()
        rest = await asyncio.wait_for(_joined(chunks), WAIT)
    assert rest == b"second\n"


async def test_the_app_stream_is_closed_when_the_browser_leaves(
    state: AppState, browser: httpx.AsyncClient
) -> None:
    async with browser.stream("GET", f"{PREFIX}slow") as response:
        assert await asyncio.wait_for(anext(response.aiter_raw()), WAIT) == b"first\n"
    await asyncio.wait_for(state.stream_closed.wait(), WAIT)


async def test_a_redirect_to_the_app_becomes_a_path_and_every_cookie_is_kept(
    servers: Servers, browser: httpx.AsyncClient
) -> None:
    response = await browser.get(f"{PREFIX}redirect")
    assert response.status_code == 302
    assert response.headers["location"] == f"{PREFIX}lab?reset=1#top"
    cookies = response.headers.get_list("set-cookie")
    assert [cookie.split("=", 1)[0] for cookie in cookies] == ["_xsrf", "username-node"]
    # The client is shared by every user: it keeps none of an app's cookies.
    assert len(servers.client.cookies.jar) == 0

    away = await browser.get(f"{PREFIX}redirect", params={"to": "https://example.org/x"})
    assert away.headers["location"] == "https://example.org/x"


async def test_an_app_that_does_not_answer_is_a_502(browser: httpx.AsyncClient) -> None:
    response = await browser.get(f"{DOWN_PREFIX}lab")
    assert (response.status_code, response.text) == (502, "The app's server is not answering.")


def _direct(path: str) -> Request:
    """A request as the front's server would hand it over, for calling proxy_http directly."""

    async def receive() -> Message:
        return {"type": "http.request", "body": b"", "more_body": False}

    scope = {
        "type": "http",
        "asgi": {"spec_version": "2.4"},
        "method": "GET",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "headers": [],
    }
    return Request(scope, receive)


async def test_proxy_http_raises_upstream_unavailable(servers: Servers) -> None:
    request = _direct(f"{DOWN_PREFIX}lab")
    with pytest.raises(UpstreamUnavailable, match="not answering"):
        await proxy_http(request, servers.down, servers.client, PORTAL_COOKIES)


async def test_the_app_stream_is_closed_when_sending_to_the_browser_fails(
    servers: Servers, state: AppState
) -> None:
    # How ASGI 2.4 servers report a browser that has gone: sending fails, nothing is read.
    request = _direct(f"{PREFIX}slow")
    response = await proxy_http(request, servers.live, servers.client, PORTAL_COOKIES)

    async def send(message: Message) -> None:
        if message["type"] == "http.response.body":
            raise OSError("the browser has gone")

    with pytest.raises((ClientDisconnect, OSError)):
        await asyncio.wait_for(response(request.scope, request.receive, send), WAIT)
    await asyncio.wait_for(state.stream_closed.wait(), WAIT)


async def test_websocket_relays_text_and_binary_with_the_apps_subprotocol(
    servers: Servers, state: AppState
) -> None:
    protocols = ["first.example", JUPYTER_PROTOCOL]
    async with browser_socket(servers, f"{PREFIX}ws?kernel=1", subprotocols=protocols) as ws:
        assert ws.subprotocol == JUPYTER_PROTOCOL
        large = bytes(range(256)) * (4 * 4096)  # 4 MiB, over websockets' default 1 MiB
        for message in ["hello", b"\x00\x01binary", large, ""]:
            await ws.send(message)
            assert await asyncio.wait_for(ws.recv(), WAIT) == message


async def test_websocket_handshake_carries_the_token_cookies_and_origin(
    servers: Servers, state: AppState
) -> None:
    headers = {"cookie": "portal_session=s1; _xsrf=2|x", "authorization": "Bearer b"}
    origin = f"http://{servers.front}"
    path = f"{PREFIX}ws?kernel=1&session=a%2Fb"
    async with browser_socket(servers, path, additional_headers=headers, origin=origin) as ws:
        await ws.send("headers")
        seen = json.loads(await asyncio.wait_for(ws.recv(), WAIT))
    assert seen["target"] == path
    pairs = seen["headers"]
    assert [value for name, value in pairs if name == "authorization"] == [f"token {TOKEN}"]
    assert [value for name, value in pairs if name == "cookie"] == ["_xsrf=2|x"]
    authority = f"127.0.0.1:{servers.live.port}"
    assert dict(pairs)["origin"] == f"http://{authority}"
    assert [value for name, value in pairs if name == "host"] == [authority]


async def test_websocket_close_from_the_app_reaches_the_browser(
    servers: Servers, state: AppState
) -> None:
    async with browser_socket(servers, f"{PREFIX}ws") as ws:
        await ws.send("close:4000:kernel gone")
        with pytest.raises(ConnectionClosed) as closed:
            await asyncio.wait_for(ws.recv(), WAIT)
    assert closed.value.rcvd is not None
    assert (closed.value.rcvd.code, closed.value.rcvd.reason) == (4000, "kernel gone")


async def test_websocket_close_from_the_browser_reaches_the_app(
    servers: Servers, state: AppState
) -> None:
    async with browser_socket(servers, f"{PREFIX}ws") as ws:
        await ws.send("ping")
        assert await asyncio.wait_for(ws.recv(), WAIT) == "ping"
        await asyncio.wait_for(ws.close(4001, "tab closed"), WAIT)
    assert await asyncio.wait_for(state.closes.get(), WAIT) == (4001, "tab closed")


@pytest.mark.parametrize(
    "path", [f"{DOWN_PREFIX}ws", f"{PREFIX}no-socket-here"], ids=["unreachable", "refused"]
)
async def test_websocket_to_an_app_that_cannot_take_it_closes_with_1011(
    servers: Servers, state: AppState, path: str
) -> None:
    async with browser_socket(servers, path, subprotocols=[JUPYTER_PROTOCOL]) as ws:
        with pytest.raises(ConnectionClosed) as closed:
            await asyncio.wait_for(ws.recv(), WAIT)
    assert closed.value.rcvd is not None
    assert closed.value.rcvd.code == 1011
    assert closed.value.rcvd.reason == "The app's server is not answering."
