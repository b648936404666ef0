"""A desktop session (``kind = "vnc"``) on its own host: noVNC, and the VNC stream bridged.

The portal serves noVNC itself (vendored in static/vendor/novnc) on the session's host, and
bridges the browser's WebSocket to websockify on the node, through the login node when the
cluster says so: there is no route from the browser to the node. The portal answers the VNC
server's password challenge itself (the password never reaches a browser), and for a viewer
keeps only the messages that ask for pictures (app/interactive/rfb.py). A viewer whose link
is revoked, or an owner whose session ends, loses the stream within ``RECHECK_SECONDS``.
While a stream is open the bridge notes on the session's row that someone has the desktop
on screen (at connect, every ``VIEWED_EVERY_SECONDS``, and when it closes): the idle check,
in the poller's process, reads when the last viewer left from there (``no_viewer``).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from pathlib import Path
from urllib.parse import urlencode

from starlette.requests import Request
from starlette.responses import FileResponse, PlainTextResponse, RedirectResponse, Response
from starlette.websockets import WebSocket, WebSocketDisconnect
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake
from websockets.typing import Subprotocol

from app.i18n import _
from app.interactive import rfb
from app.interactive.sessions import BASE_PATH
from app.interactive.upstream import CONNECT_TIMEOUT
from app.scheduler.errors import SchedulerError
from app.web.app_proxy import Reach
from app.web.app_relay import UNAVAILABLE, connection_to

NOVNC_DIR = Path(__file__).resolve().parent.parent / "_static" / "vendor" / "novnc"
STREAM_PATH = "websockify"
STATIC_PREFIX = "novnc/"
HANDSHAKE_SECONDS = 20.0
RECHECK_SECONDS = 5.0
VIEWED_EVERY_SECONDS = 30.0
MAX_FRAME_BYTES = 16 * 1024 * 1024
# noVNC's own page: its scripts and styles from this host, the stream to this host, the
# remote cursor as a data: image; never framed by another page.
POLICY = (
    "default-src 'self'; img-src 'self' data: blob:; connect-src 'self'; "
    "frame-ancestors 'none'; base-uri 'none'; form-action 'none'; object-src 'none'"
)

Recheck = Callable[[], Awaitable[bool]]
# Notes that someone has the desktop open now: one short write, never held while streaming.
Seen = Callable[[], Awaitable[None]]


def viewer_query(session_uuid: str, view_only: bool) -> str:
    """noVNC's settings: connect at once through the portal's path, follow the browser
    window's size (an owner resizes the desktop, a viewer scales the picture), and
    reconnect after a dropped connection."""
    settings = {
        "autoconnect": "true",
        "reconnect": "true",
        "reconnect_delay": "1000",
        "resize": "scale" if view_only else "remote",
        "view_only": "true" if view_only else "false",
        "show_dot": "true",
        "path": BASE_PATH.format(uuid=session_uuid).lstrip("/") + STREAM_PATH,
    }
    return urlencode(settings)


def page(request: Request, reach: Reach, session_uuid: str, path: str) -> Response:
    """The desktop's base path opens noVNC; its files are served from the portal."""
    if path == "":
        base = BASE_PATH.format(uuid=session_uuid)
        target = f"{base}{STATIC_PREFIX}vnc.html?{viewer_query(session_uuid, reach.view_only)}"
        return RedirectResponse(target, status_code=303)
    if path.startswith(STATIC_PREFIX) and request.method in ("GET", "HEAD"):
        found = _static_file(path.removeprefix(STATIC_PREFIX))
        if found is not None:
            return FileResponse(found, headers={"Content-Security-Policy": POLICY})
    return PlainTextResponse(_("Not found."), status_code=404)


def _static_file(relative: str) -> Path | None:
    base = NOVNC_DIR.resolve()
    target = (base / relative).resolve()
    if not target.is_relative_to(base) or not target.is_file():
        return None
    return target


class _Bytes:
    """Exact reads over a stream of WebSocket frames of any size."""

    def __init__(self, receive: Callable[[], Awaitable[bytes]]) -> None:
        self._receive = receive
        self._buffer = bytearray()

    async def read(self, count: int) -> bytes:
        while len(self._buffer) < count:
            self._buffer += await self._receive()
        data = bytes(self._buffer[:count])
        del self._buffer[:count]
        return data

    def rest(self) -> bytes:
        data, self._buffer = bytes(self._buffer), bytearray()
        return data


async def _from_browser(websocket: WebSocket) -> bytes:
    message = await websocket.receive()
    if message["type"] == "websocket.disconnect":
        raise WebSocketDisconnect(int(message.get("code") or 1000))
    data = message.get("bytes")
    if data is None:
        raise rfb.RfbError("noVNC sends binary frames only")
    return bytes(data)


async def _open_server(reach: Reach) -> ClientConnection | None:
    upstream = reach.upstream
    try:
        return await connect(
            f"ws://{upstream.authority}/",
            subprotocols=[Subprotocol("binary")],
            user_agent_header=None,
            compression=None,
            open_timeout=CONNECT_TIMEOUT,
            max_size=MAX_FRAME_BYTES,
            proxy=None,
            **await connection_to(upstream),
        )
    except (OSError, TimeoutError, InvalidHandshake, ValueError, SchedulerError):
        return None


async def _from_server(server: ClientConnection) -> bytes:
    data = await server.recv()
    return data if isinstance(data, bytes) else data.encode("latin-1")


async def _close(websocket: WebSocket, code: int, reason: str) -> None:
    with contextlib.suppress(WebSocketDisconnect, RuntimeError):
        await websocket.close(code, reason)


async def bridge(websocket: WebSocket, reach: Reach, recheck: Recheck, seen: Seen) -> None:
    """Connects noVNC (its WebSocket not yet accepted) to the session's VNC server."""
    server = await _open_server(reach)
    offered = websocket.scope.get("subprotocols") or [None]
    await websocket.accept(subprotocol=offered[0])
    if server is None:
        await _close(websocket, 1011, UNAVAILABLE)
        return
    try:
        await _bridge_open(websocket, server, reach, recheck, seen)
    except (rfb.RfbError, TimeoutError, ConnectionClosed) as error:
        await _close(websocket, 1011, str(error)[:120] or UNAVAILABLE)
    except WebSocketDisconnect:
        pass
    finally:
        await server.close()


async def _bridge_open(
    websocket: WebSocket, server: ClientConnection, reach: Reach, recheck: Recheck, seen: Seen
) -> None:
    from_server = _Bytes(lambda: _from_server(server))
    from_browser = _Bytes(lambda: _from_browser(websocket))
    async with asyncio.timeout(HANDSHAKE_SECONDS):
        await rfb.sign_in_to_server(from_server.read, server.send, reach.secret)
        await rfb.greet_browser(from_browser.read, websocket.send_bytes)
        await server.send(rfb.shared_client_init(await from_browser.read(1)))
    viewer = rfb.ViewerFilter() if reach.view_only else None
    await seen()
    try:
        if leftover := from_server.rest():
            await websocket.send_bytes(leftover)
        if leftover := from_browser.rest():
            await _to_server(server, viewer, leftover)
        await _stream(websocket, server, viewer, recheck, seen)
    finally:
        # When the last viewer left is when the desktop's idle clock starts.
        await seen()


async def _stream(
    websocket: WebSocket,
    server: ClientConnection,
    viewer: rfb.ViewerFilter | None,
    recheck: Recheck,
    seen: Seen,
) -> None:
    pumps = [
        asyncio.create_task(_browser_to_server(websocket, server, viewer)),
        asyncio.create_task(_server_to_browser(websocket, server)),
        asyncio.create_task(_while_allowed(recheck, seen)),
    ]
    try:
        done, _pending = await asyncio.wait(pumps, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in pumps:
            task.cancel()
        await asyncio.gather(*pumps, return_exceptions=True)
    for task in done:
        task.result()


async def _to_server(
    server: ClientConnection, viewer: rfb.ViewerFilter | None, data: bytes
) -> None:
    kept = data if viewer is None else viewer.feed(data)
    if kept:
        await server.send(kept)


async def _browser_to_server(
    websocket: WebSocket, server: ClientConnection, viewer: rfb.ViewerFilter | None
) -> None:
    while True:
        await _to_server(server, viewer, await _from_browser(websocket))


async def _server_to_browser(websocket: WebSocket, server: ClientConnection) -> None:
    while True:
        await websocket.send_bytes(await _from_server(server))


async def _while_allowed(recheck: Recheck, seen: Seen) -> None:
    """Returns once the user may no longer reach the session (link revoked, session over);
    meanwhile notes, now and then, that the desktop is still on someone's screen."""
    clock = asyncio.get_running_loop().time
    noted = clock()
    while True:
        await asyncio.sleep(RECHECK_SECONDS)
        if not await recheck():
            raise rfb.RfbError(_("You can no longer see this desktop."))
        if clock() - noted >= VIEWED_EVERY_SECONDS:
            await seen()
            noted = clock()
