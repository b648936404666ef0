"""Requests to an app's server over a connection its opener gives (``via_login``): the URL's
host is never dialled, yet the server sees its own name in Host; each request its own."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator

import httpx
import pytest

from app.interactive.upstream import Upstream, upstream_client
from app.scheduler.errors import SchedulerUnavailable

# A name no resolver knows: reaching it proves the opener, not DNS, chose the connection.
NODE = "node017.invalid"


@pytest.fixture
async def server() -> AsyncIterator[tuple[int, list[bytes]]]:
    """A tiny HTTP server on loopback that answers with the request head it received."""
    heads: list[bytes] = []

    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        heads.append(head)
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(head), head))
        await writer.drain()
        writer.close()

    listener = await asyncio.start_server(answer, "127.0.0.1", 0)
    async with listener:
        yield listener.sockets[0].getsockname()[1], heads


async def test_requests_go_through_the_opener_with_the_nodes_own_host(
    server: tuple[int, list[bytes]],
) -> None:
    port, heads = server
    asked: list[tuple[str, int]] = []

    async def opener(host: str, wanted: int) -> socket.socket:
        asked.append((host, wanted))
        return socket.create_connection(("127.0.0.1", port))

    upstream = Upstream(NODE, 8888, "Authorization", "token s", opener)
    async with upstream_client() as client:
        for _ in range(2):
            answer = await client.get(f"http://{NODE}:8888/lab", extensions=upstream.extensions())
            assert answer.status_code == 200
    assert asked == [(NODE, 8888), (NODE, 8888)]
    assert all(f"host: {NODE}:8888".encode() in head.lower() for head in heads)


async def test_a_refused_tunnel_is_a_connect_error() -> None:
    async def opener(host: str, port: int) -> socket.socket:
        raise SchedulerUnavailable("cannot reach node017:8888 from the login node: open failed")

    upstream = Upstream(NODE, 8888, "Authorization", "token s", opener)
    async with upstream_client() as client:
        with pytest.raises(httpx.ConnectError, match="from the login node"):
            await client.get(f"http://{NODE}:8888/", extensions=upstream.extensions())
