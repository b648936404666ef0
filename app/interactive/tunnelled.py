"""HTTP to an app's server over a connection the portal did not dial itself: a socket from the
cluster's tunnels (``compute_access = "via_login"``), opened by the request's own opener.

httpx sends such a request through httpcore with a network backend that asks the opener for
the socket instead of connecting to the URL's host; the URL, and so the Host header, still
names the node and port, as the app expects. Every request gets a connection of its own,
closed with its response: a connection is the user's own channel and is never pooled for
another request.
"""

# httpcore's network interface takes its timeouts as parameters; its signatures are kept.
# ruff: noqa: ASYNC109

from __future__ import annotations

import asyncio
import contextlib
import socket
import ssl
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Iterator
from typing import Any

import httpcore
import httpx

from app.scheduler.errors import SchedulerError

# Opens a connection to (host, port) as the session's owner, through their login node.
Opener = Callable[[str, int], Awaitable[socket.socket]]
# The request extension carrying a request's opener; requests without it connect directly.
OPENER = "portal_opener"


class _Stream(httpcore.AsyncNetworkStream):
    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._reader, self._writer = reader, writer

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        try:
            return await asyncio.wait_for(self._reader.read(max_bytes), timeout)
        except TimeoutError:
            raise httpcore.ReadTimeout("the app's server did not answer in time") from None
        except OSError as exc:
            raise httpcore.ReadError(str(exc)) from exc

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        try:
            self._writer.write(buffer)
            await asyncio.wait_for(self._writer.drain(), timeout)
        except TimeoutError:
            raise httpcore.WriteTimeout("the app's server took no data in time") from None
        except OSError as exc:
            raise httpcore.WriteError(str(exc)) from exc

    async def aclose(self) -> None:
        self._writer.close()
        with contextlib.suppress(OSError):
            await self._writer.wait_closed()

    async def start_tls(
        self,
        ssl_context: ssl.SSLContext,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> httpcore.AsyncNetworkStream:
        raise httpcore.ConnectError("apps are reached over plain HTTP through the tunnel")

    def get_extra_info(self, info: str) -> Any:
        return None


class _OpenerBackend(httpcore.AsyncNetworkBackend):
    def __init__(self, opener: Opener) -> None:
        self._opener = opener

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        try:
            sock = await asyncio.wait_for(self._opener(host, port), timeout)
        except TimeoutError:
            raise httpcore.ConnectTimeout(f"no connection to {host}:{port} in time") from None
        except (SchedulerError, OSError) as exc:
            raise httpcore.ConnectError(str(exc)) from exc
        reader, writer = await asyncio.open_connection(sock=sock)
        return _Stream(reader, writer)

    async def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        raise httpcore.ConnectError("apps are reached over TCP")

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)


@contextlib.contextmanager
def _as_httpx_errors() -> Iterator[None]:
    """httpcore's exceptions as httpx's of the same name, as httpx's own transport does."""
    try:
        yield
    except httpcore.TimeoutException as exc:
        raise getattr(httpx, type(exc).__name__, httpx.TimeoutException)(str(exc)) from exc
    except httpcore.NetworkError as exc:
        raise getattr(httpx, type(exc).__name__, httpx.NetworkError)(str(exc)) from exc
    except httpcore.ProtocolError as exc:
        raise getattr(httpx, type(exc).__name__, httpx.ProtocolError)(str(exc)) from exc


class _Body(httpx.AsyncByteStream):
    def __init__(self, stream: Any) -> None:
        self._stream = stream

    async def __aiter__(self) -> AsyncIterator[bytes]:
        with _as_httpx_errors():
            async for part in self._stream:
                yield part

    async def aclose(self) -> None:
        await self._stream.aclose()


async def send_through(opener: Opener, request: httpx.Request) -> httpx.Response:
    """Sends ``request`` over a connection from ``opener``, closed once the response is."""
    # No connection is kept once its response is closed.
    pool = httpcore.AsyncConnectionPool(
        network_backend=_OpenerBackend(opener), max_keepalive_connections=0
    )
    core = httpcore.Request(
        method=request.method,
        url=httpcore.URL(
            scheme=request.url.raw_scheme,
            host=request.url.raw_host,
            port=request.url.port,
            target=request.url.raw_path,
        ),
        headers=request.headers.raw,
        content=request.stream,
        extensions={"timeout": request.extensions.get("timeout", {})},
    )
    with _as_httpx_errors():
        response = await pool.handle_async_request(core)
    return httpx.Response(
        status_code=response.status,
        headers=response.headers,
        stream=_Body(response.stream),
        extensions=response.extensions,
    )


class UpstreamTransport(httpx.AsyncBaseTransport):
    """Directly to the app's server, or through the request's opener when it has one."""

    def __init__(self, direct: httpx.AsyncBaseTransport) -> None:
        self._direct = direct

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        opener = request.extensions.get(OPENER)
        if opener is None:
            return await self._direct.handle_async_request(request)
        return await send_through(opener, request)

    async def aclose(self) -> None:
        await self._direct.aclose()
