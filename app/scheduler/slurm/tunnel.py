"""ComputeTunnels over SSH: each connection is a direct-tcpip channel on the user's own
connection to the login node, handed over as one end of a socket pair whose other end is
relayed to the channel."""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import Awaitable, Callable

import asyncssh

from app.scheduler.slurm.ssh import Channel, SshTransport

CHUNK = 256 * 1024
# Seconds the app's side may go on sending once the portal's side has closed.
LINGER = 10.0
# What ends one direction of a relay as an end of data would: the other side went away.
LOST = (OSError, EOFError, asyncssh.Error)


class SshTunnels:
    """ComputeTunnels over the SSH transport's pooled per-user connections."""

    def __init__(self, ssh: SshTransport) -> None:
        self._ssh = ssh
        self._relays: set[asyncio.Task[None]] = set()

    async def open(self, host: str, port: int, as_user: str) -> socket.socket:
        channel = await self._ssh.open_channel(host, port, as_user)
        ours, theirs = socket.socketpair()
        ours.setblocking(False)
        relay = asyncio.create_task(_relay(ours, channel))
        self._relays.add(relay)
        relay.add_done_callback(self._relays.discard)
        return theirs

    async def close(self) -> None:
        for relay in list(self._relays):
            relay.cancel()
        await asyncio.gather(*self._relays, return_exceptions=True)


async def _relay(ours: socket.socket, channel: Channel) -> None:
    """Copies bytes both ways until both sides have finished sending, then closes both.

    Once the portal's side has closed, the app gets ``LINGER`` seconds to finish too: a server
    that ignores the end of its input must not keep the channel, and the user's connection
    with it, busy for ever.
    """
    reader, writer = await asyncio.open_connection(sock=ours)
    to_portal = asyncio.create_task(
        _copy(channel.reader.read, writer.write, writer.drain, writer.write_eof)
    )
    out = channel.writer
    try:
        await _copy(reader.read, out.write, out.drain, out.write_eof)
        await asyncio.wait_for(to_portal, LINGER)
    except TimeoutError:
        pass
    finally:
        to_portal.cancel()
        channel.close()
        writer.close()
        with contextlib.suppress(OSError):
            await writer.wait_closed()


async def _copy(
    read: Callable[[int], Awaitable[bytes]],
    write: Callable[[bytes], object],
    drain: Callable[[], Awaitable[None]],
    write_eof: Callable[[], object],
) -> None:
    """One direction, until its source ends or either side is lost."""
    with contextlib.suppress(*LOST):
        while data := await read(CHUNK):
            write(data)
            await drain()
    with contextlib.suppress(*LOST):
        write_eof()
