"""Operations over HTTP: a request id, an access log and HTTP metrics for every request (one
ASGI middleware), and the Prometheus ``/metrics`` page for monitoring hosts.

The metrics themselves and the JSON logs are framework-free (app/observability), so the
poller, which serves no pages, uses them without standing on the web surface.
"""

from __future__ import annotations

import logging
import re
import time
import uuid

from fastapi import APIRouter, FastAPI, Request
from fastapi.responses import PlainTextResponse
from starlette.datastructures import MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.errors import NotFound
from app.observability.logs import configure_json_logging, request_id_var, user_id_var
from app.observability.metrics import HTTP_LATENCY, HTTP_REQUESTS
from app.observability.serve import PROMETHEUS_TEXT, metrics_text
from app.web.proxies import is_operations_request

access_logger = logging.getLogger("app.access")
REQUEST_ID_HEADER = "X-Request-ID"
# A caller's id is kept only when it cannot smuggle anything into logs or headers.
_SAFE_REQUEST_ID = re.compile(r"^[A-Za-z0-9._:-]{1,128}$")
UNMATCHED_ROUTE = "<unmatched>"


def incoming_request_id(scope: Scope) -> str:
    for name, value in scope.get("headers", ()):
        if name == b"x-request-id":
            candidate: str = value.decode("latin-1")
            if _SAFE_REQUEST_ID.match(candidate):
                return candidate
    return uuid.uuid4().hex


def route_template(scope: Scope) -> str:
    """The matched route's path template, so ids do not explode the metric's label values."""
    # FastAPI keeps included routers' routes with relative paths and records the full one here.
    fastapi_state = scope.get("fastapi") or {}
    for candidate in (fastapi_state.get("effective_route_context"), scope.get("route")):
        path = getattr(candidate, "path", None)
        if isinstance(path, str):
            return path
    return UNMATCHED_ROUTE


def user_of(scope: Scope) -> int | None:
    state = scope.get("state") or {}
    context = state.get("web_context")
    actor = getattr(context, "actor", None)
    user_id = getattr(actor, "user_id", None)
    return user_id if isinstance(user_id, int) else None


class ObservabilityMiddleware:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request_id = incoming_request_id(scope)
        token = request_id_var.set(request_id)
        started = time.perf_counter()
        status = 500

        async def send_with_id(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
                MutableHeaders(scope=message)[REQUEST_ID_HEADER] = request_id
            await send(message)

        try:
            await self.app(scope, receive, send_with_id)
        finally:
            self._record(scope, status, time.perf_counter() - started)
            request_id_var.reset(token)

    @staticmethod
    def _record(scope: Scope, status: int, seconds: float) -> None:
        method = str(scope.get("method", ""))
        route = route_template(scope)
        HTTP_REQUESTS.inc(method, route, str(status))
        HTTP_LATENCY.observe(seconds, method, route)
        user_id = user_of(scope)
        user_token = user_id_var.set(user_id)
        try:
            # Carried on the record too, for handlers that format it later.
            access_logger.info(
                "%s %s %s",
                method,
                scope.get("path", ""),
                status,
                extra={
                    "request_id": request_id_var.get(),
                    "user_id": user_id,
                    "method": method,
                    "path": scope.get("path", ""),
                    "status": status,
                    "duration_ms": round(seconds * 1000, 2),
                },
            )
        finally:
            user_id_var.reset(user_token)


router = APIRouter()


@router.get("/metrics", include_in_schema=False)
async def metrics(request: Request) -> PlainTextResponse:
    # Route names, error counts and timings describe the site: for monitoring hosts only.
    if not is_operations_request(request):
        raise NotFound()
    return PlainTextResponse(metrics_text(), media_type=PROMETHEUS_TEXT)


def install(app: FastAPI) -> None:
    """Add the request middleware and the metrics route; JSON logs unless already configured."""
    # A host that configured logging itself (a test runner, a site's dictConfig) keeps it.
    if not logging.getLogger().handlers:
        configure_json_logging()
    app.add_middleware(ObservabilityMiddleware)
    app.include_router(router)
