"""Stand-in app servers for bench_proxy.py: one process, COUNT listeners on 127.0.0.1.

    .venv/bin/python bench/proxy_apps.py COUNT

Every listener serves the same small app under any path: a WebSocket echoes each message,
``.../stream`` streams 1 KB every 100 ms until the client leaves, anything else answers a
small JSON body. Prints the ports, space separated, on one line once it serves. Runs in its
own process so that none of it counts in the portal's memory.
"""

from __future__ import annotations

import asyncio
import logging
import socket
import sys
from collections.abc import AsyncIterator

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route, WebSocketRoute
from starlette.websockets import WebSocket, WebSocketDisconnect

CHUNK = b"x" * 1023 + b"\n"
EVERY = 0.1
METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]


async def answer(request: Request) -> Response:
    if request.url.path.endswith("/stream"):

        async def body() -> AsyncIterator[bytes]:
            while True:
                yield CHUNK
                await asyncio.sleep(EVERY)

        return StreamingResponse(body(), media_type="application/octet-stream")
    return JSONResponse({"version": "bench", "path": request.url.path})


async def echo(websocket: WebSocket) -> None:
    await websocket.accept()
    try:
        while True:
            message = await websocket.receive()
            if message["type"] == "websocket.disconnect":
                return
            if message.get("text") is not None:
                await websocket.send_text(message["text"])
            elif message.get("bytes") is not None:
                await websocket.send_bytes(message["bytes"])
    except WebSocketDisconnect:
        return


def build() -> Starlette:
    return Starlette(
        routes=[
            WebSocketRoute("/{path:path}", echo),
            Route("/{path:path}", answer, methods=METHODS),
        ]
    )


async def serve(count: int) -> None:
    sockets = []
    for _ in range(count):
        # IPPROTO_TCP, so that asyncio sets TCP_NODELAY on each connection, as it does for
        # servers started from a host and port.
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        sock.bind(("127.0.0.1", 0))
        sockets.append(sock)
    config = uvicorn.Config(
        build(), log_level="warning", access_log=False, lifespan="off", ws_max_size=2**24
    )
    server = uvicorn.Server(config)
    task = asyncio.create_task(server.serve(sockets=sockets))
    # uvicorn reports start-up only through this flag, so it is polled.
    while not server.started:
        if task.done():
            task.result()
        await asyncio.sleep(0.02)
    print(" ".join(str(sock.getsockname()[1]) for sock in sockets), flush=True)
    await task


if __name__ == "__main__":
    logging.basicConfig(level=logging.WARNING)
    asyncio.run(serve(int(sys.argv[1])))
