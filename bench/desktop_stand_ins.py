"""Stand-in desktops for bench_desktop.py: one process, COUNT listeners on 127.0.0.1.

    .venv/bin/python bench/desktop_stand_ins.py COUNT SECRET

Each is websockify and Xvnc in one: RFB 3.8 over a WebSocket, VNC authentication with
SECRET, then a 64x64 Raw frame (16 KB) every 100 ms while it reads and drops whatever the
viewer sends. Prints the ports, space separated, on one line once it serves. Runs in its own
process so that none of it counts in the portal's memory.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
import struct
import sys

from websockets.asyncio.server import ServerConnection, serve
from websockets.typing import Subprotocol

from app.interactive import rfb

SIZE = (1280, 800)
SIDE = 64
EVERY = 0.1
RAW = 0
# 32 bits per pixel, depth 24, little-endian true colour, 8 bits a channel.
PIXEL_FORMAT = struct.pack(">BBBBHHHBBBxxx", 32, 24, 0, 1, 255, 255, 255, 16, 8, 0)
FRAME = struct.pack(">BxHHHHHi", 0, 1, 0, 0, SIDE, SIDE, RAW) + bytes(SIDE * SIDE * 4)


class _Reader:
    def __init__(self, socket_: ServerConnection) -> None:
        self.socket, self.buffer = socket_, bytearray()

    async def read(self, count: int) -> bytes:
        while len(self.buffer) < count:
            data = await self.socket.recv()
            self.buffer.extend(data if isinstance(data, bytes) else data.encode())
        data = bytes(self.buffer[:count])
        del self.buffer[:count]
        return data


async def desktop(secret: str, socket_: ServerConnection) -> None:
    reader = _Reader(socket_)
    await socket_.send(rfb.VERSION)
    await reader.read(12)
    await socket_.send(bytes([1, rfb.SECURITY_VNC]))
    await reader.read(1)
    challenge = secrets.token_bytes(16)
    await socket_.send(challenge)
    if await reader.read(16) != rfb.vnc_auth_response(secret, challenge):
        await socket_.send(struct.pack(">I", 1))
        return
    await socket_.send(struct.pack(">I", 0))
    await reader.read(1)
    await socket_.send(struct.pack(">HH", *SIZE) + PIXEL_FORMAT + b"\0\0\0\x04Desk")
    drain = asyncio.create_task(_drain(socket_))
    try:
        while not drain.done():
            await socket_.send(FRAME)
            await asyncio.sleep(EVERY)
    except Exception:
        return
    finally:
        drain.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await drain


async def _drain(socket_: ServerConnection) -> None:
    async for _message in socket_:
        pass


async def main(count: int, secret: str) -> None:
    binary = [Subprotocol("binary")]
    servers = [
        await serve(
            lambda s: desktop(secret, s), "127.0.0.1", 0, subprotocols=binary, max_size=None
        )
        for _ in range(count)
    ]
    print(" ".join(str(next(iter(s.sockets)).getsockname()[1]) for s in servers), flush=True)
    await asyncio.Event().wait()


if __name__ == "__main__":
    logging.basicConfig(level=logging.WARNING)
    asyncio.run(main(int(sys.argv[1]), sys.argv[2]))
