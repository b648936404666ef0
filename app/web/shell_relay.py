"""Joins a browser's WebSocket to an open shell until one side ends, the user stops typing, or
the user is no longer signed in.

Keystrokes (binary frames) go to the shell, window sizes (JSON text frames) resize it, and
the shell's output goes back as binary frames. Only keystrokes count as activity: a shell whose
window is resized, or whose program keeps printing, still ends after the idle time.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import Awaitable, Callable

from starlette.websockets import WebSocket, WebSocketDisconnect

from app.scheduler.errors import SchedulerError
from app.scheduler.terminals import Terminal, TerminalSize
from app.shell.service import EndedBy

logger = logging.getLogger(__name__)
# Seconds the page has to send its first frame (its CSRF token and window size).
HELLO_SECONDS = 10.0
# Seconds between two checks that the shell's user is still signed in (signed out elsewhere,
# session expired, account deactivated): each is one short transaction.
SIGN_IN_CHECK_SECONDS = 60.0


async def first_text(websocket: WebSocket) -> str:
    """The first frame, which must be text; ValueError otherwise, TimeoutError if it is late."""
    message = await asyncio.wait_for(websocket.receive(), HELLO_SECONDS)
    text = message.get("text")
    if message["type"] != "websocket.receive" or not isinstance(text, str):
        raise ValueError("the first frame is not text")
    return text


def size_of(text: str) -> TerminalSize | None:
    """The window size in a text frame, ``{"columns": 80, "rows": 24}``; None if it is not."""
    try:
        sent = json.loads(text)
        return TerminalSize.clamped(int(sent["columns"]), int(sent["rows"]))
    except (ValueError, TypeError, KeyError):
        return None


async def close_with(websocket: WebSocket, code: int, notice: str | None) -> None:
    """Tell the page why (a text frame it prints), then close; the browser may be gone."""
    with contextlib.suppress(WebSocketDisconnect, RuntimeError, OSError):
        if notice:
            await websocket.send_text(notice)
        await websocket.close(code)


async def _browser_to_shell(
    websocket: WebSocket, terminal: Terminal, idle_timeout: float
) -> EndedBy:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + idle_timeout
    while True:
        try:
            message = await asyncio.wait_for(websocket.receive(), deadline - loop.time())
        except TimeoutError:
            return "idle"
        if message["type"] == "websocket.disconnect":
            return "browser"
        data = message.get("bytes")
        if data:
            try:
                await terminal.write(data)
            except SchedulerError:
                return "lost"
            deadline = loop.time() + idle_timeout
        elif isinstance(message.get("text"), str):
            size = size_of(message["text"])
            if size is not None:
                terminal.resize(size)


async def _shell_to_browser(websocket: WebSocket, terminal: Terminal) -> EndedBy:
    while True:
        try:
            data = await terminal.read()
        except SchedulerError:
            return "lost"
        if not data:
            return "exit"
        try:
            await websocket.send_bytes(data)
        except (WebSocketDisconnect, RuntimeError, OSError):
            return "browser"


async def _while_signed_in(is_signed_in: Callable[[], Awaitable[bool]]) -> EndedBy:
    while True:
        await asyncio.sleep(SIGN_IN_CHECK_SECONDS)
        try:
            if not await is_signed_in():
                return "signed_out"
        except Exception:
            # The database out of reach for a moment says nothing about the user: the next
            # check decides.
            logger.warning("could not check a shell's user is still signed in", exc_info=True)


async def relay(
    websocket: WebSocket,
    terminal: Terminal,
    idle_timeout: float,
    is_signed_in: Callable[[], Awaitable[bool]],
) -> EndedBy:
    """Relays both ways until the browser leaves, the shell ends, the user is idle for
    ``idle_timeout`` seconds or ``is_signed_in`` (asked every SIGN_IN_CHECK_SECONDS) says no;
    says which. The caller closes both sides."""
    pumps = [
        asyncio.create_task(_browser_to_shell(websocket, terminal, idle_timeout)),
        asyncio.create_task(_shell_to_browser(websocket, terminal)),
        asyncio.create_task(_while_signed_in(is_signed_in)),
    ]
    try:
        done, _ = await asyncio.wait(pumps, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in pumps:
            task.cancel()
        await asyncio.gather(*pumps, return_exceptions=True)
    endings: list[EndedBy] = []
    for task in done:
        if task.exception() is None:
            endings.append(task.result())
        else:
            logger.warning("a shell's relay failed", exc_info=task.exception())
            endings.append("lost")
    # Both may have finished at once: the shell's end is the more telling.
    return "exit" if "exit" in endings else endings[0]
