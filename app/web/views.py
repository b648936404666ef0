"""Rendering helpers shared by the portal's pages."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from fastapi import Request
from fastapi.responses import RedirectResponse, Response

from app.templating import is_htmx, render
from app.web.auth import WebContext, set_anon_csrf_cookie


def page(
    request: Request,
    web: WebContext,
    name: str,
    context: Mapping[str, Any] | None = None,
    *,
    block: str | None = None,
    status_code: int = 200,
) -> Response:
    """A page (or one block of it for HTMX) with the visitor and CSRF token in scope."""
    values = {"actor": web.actor, "csrf_token": web.csrf_token, **(context or {})}
    response = render(request, name, values, block, status_code=status_code)
    set_anon_csrf_cookie(request, response, web)
    return response


def redirect(request: Request, url: str) -> Response:
    """303 for plain forms, HX-Redirect for htmx (which would otherwise swap the target)."""
    if is_htmx(request):
        return Response(status_code=204, headers={"HX-Redirect": url})
    return RedirectResponse(url, status_code=303)


def safe_next(target: str | None, default: str = "/templates") -> str:
    """Only same-site paths, so the sign-in page cannot be used to bounce elsewhere."""
    if not target:
        return default
    parts = urlsplit(target)
    if parts.scheme or parts.netloc or not target.startswith("/") or target.startswith("//"):
        return default
    # Browsers drop tabs and newlines from a Location, which can turn "/\t/x" into "//x".
    if "\\" in target or any(ord(char) < 32 or ord(char) == 127 for char in target):
        return default
    return target
