"""The baseline of bench_job_list.py: the same framework answering ``GET /jobs`` with fixed
bytes (a copy of the portal's own job list page), with no database, session or template.

Served by uvicorn from this folder: ``uvicorn --factory bare_app:create``; the bytes come
from the file named by ``BENCH_BARE_BODY``.
"""

from __future__ import annotations

import os
from pathlib import Path

from fastapi import FastAPI
from fastapi.responses import Response


def create() -> FastAPI:
    body = Path(os.environ["BENCH_BARE_BODY"]).read_bytes()
    app = FastAPI()

    @app.get("/jobs")
    async def jobs() -> Response:
        return Response(body, media_type="text/html; charset=utf-8")

    return app
