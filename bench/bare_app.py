"""Baselines served by the same framework with nothing of the portal's: for bench_job_list.py,
``GET /jobs`` answering fixed bytes (a copy of the portal's own job list page, from the file
named by ``BENCH_BARE_BODY``), with no database, session or template; for bench_files.py,
``GET /bytes?size=N`` streaming N bytes from memory in 1 MiB pieces and ``PUT /bytes``
reading a body and dropping it (the HTTP floor of a transfer).

Served by uvicorn from this folder: ``uvicorn --factory bare_app:create``.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from pathlib import Path

from fastapi import FastAPI, Request
from fastapi.responses import Response, StreamingResponse

PIECE = 1 << 20


def create() -> FastAPI:
    named = os.environ.get("BENCH_BARE_BODY")
    body = Path(named).read_bytes() if named else b""
    piece = os.urandom(PIECE)
    app = FastAPI()

    @app.get("/bytes")
    async def stream(size: int) -> StreamingResponse:
        async def pieces() -> AsyncIterator[bytes]:
            for start in range(0, size, PIECE):
                yield piece[: min(PIECE, size - start)]

        return StreamingResponse(pieces(), media_type="application/octet-stream")

    @app.put("/bytes")
    async def take(request: Request) -> dict[str, int]:
        size = 0
        async for got in request.stream():
            size += len(got)
        return {"size": size}

    @app.get("/jobs")
    async def jobs() -> Response:
        return Response(body, media_type="text/html; charset=utf-8")

    return app
