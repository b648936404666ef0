"""A minimal HTTP listener for processes without a web app (the standalone poller).

Answers ``GET /metrics`` with the Prometheus text and ``GET /healthz`` with ``ok`` (or, given
a ``health`` function, the JSON it returns: the poller's supervised tasks); any other request
gets 404 or 405. It reads one request line and headers, answers and closes:
Prometheus needs no more, and nothing here parses a body or keeps a connection open.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import logging
from collections.abc import Callable
from typing import Any

from app.observability.metrics import exposition, registry_text
from app.observability.process import PROCESS_METRICS

logger = logging.getLogger(__name__)
PROMETHEUS_TEXT = "text/plain; version=0.0.4; charset=utf-8"
# A scraper's request is a few hundred bytes; anything slower or larger is dropped.
READ_TIMEOUT = 5.0
MAX_HEADER_BYTES = 8192


def metrics_text() -> str:
    return registry_text() + exposition(PROCESS_METRICS)


def _response(status: str, body: str, content_type: str = "text/plain; charset=utf-8") -> bytes:
    payload = body.encode()
    head = (
        f"HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\n"
        f"Content-Length: {len(payload)}\r\nConnection: close\r\n\r\n"
    )
    return head.encode() + payload


Health = Callable[[], dict[str, Any]]


def _health_response(health: Health | None) -> bytes:
    if health is None:
        return _response("200 OK", "ok\n")
    return _response("200 OK", json.dumps(health()) + "\n", "application/json")


def answer(request_line: str, health: Health | None = None) -> bytes:
    """The whole response to one request line such as ``GET /metrics HTTP/1.1``."""
    parts = request_line.split()
    if len(parts) != 3 or not parts[2].startswith("HTTP/"):
        return _response("400 Bad Request", "bad request\n")
    method, target = parts[0], parts[1].split("?", 1)[0]
    if target not in ("/metrics", "/healthz"):
        return _response("404 Not Found", "not found\n")
    if method not in ("GET", "HEAD"):
        return _response("405 Method Not Allowed", "method not allowed\n")
    if target == "/healthz":
        response = _health_response(health)
    else:
        response = _response("200 OK", metrics_text(), PROMETHEUS_TEXT)
    return response.split(b"\r\n\r\n", 1)[0] + b"\r\n\r\n" if method == "HEAD" else response


async def _handle(
    health: Health | None, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
) -> None:
    try:
        head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), READ_TIMEOUT)
        request_line = head.split(b"\r\n", 1)[0].decode("latin-1")
        writer.write(answer(request_line, health))
        await writer.drain()
    except (TimeoutError, asyncio.IncompleteReadError, asyncio.LimitOverrunError):
        pass
    except ConnectionError:
        logger.debug("metrics client went away")
    finally:
        writer.close()
        with contextlib.suppress(ConnectionError):
            await writer.wait_closed()


async def start_metrics_server(
    host: str, port: int, health: Health | None = None
) -> asyncio.Server:
    """Listen on ``host:port`` (0 picks a free port; see ``server.sockets``)."""
    handle = functools.partial(_handle, health)
    server = await asyncio.start_server(handle, host, port, limit=MAX_HEADER_BYTES)
    bound = ", ".join(str(sock.getsockname()) for sock in server.sockets)
    logger.info("metrics listening on %s", bound)
    return server
