"""Routes whose order does not matter: no two routes of the portal match one address."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
from fastapi import FastAPI

from app.config import Settings
from app.main import create_app
from app.web import router as web_registry


@pytest.fixture(scope="module")
def portal() -> FastAPI:
    # Building the app opens nothing: the engine connects on first use.
    settings = Settings(
        env="dev",
        database_url="sqlite+aiosqlite:///:memory:",
        clusters_file=None,
        run_poller_in_web=False,
    )
    return create_app(settings)


def _routes(app: FastAPI) -> Iterator[Any]:
    """Every HTTP route with its full path, whether FastAPI keeps included routers nested
    (each route's full path held by its effective context) or copies their routes."""
    for route in app.routes:
        contexts = getattr(route, "effective_route_contexts", None)
        found = contexts() if callable(contexts) else [route]
        yield from (c for c in found if isinstance(c.path, str) and getattr(c, "methods", None))


def _example(template: str) -> str:
    """An address the template stands for: 7 for an int, a UUID, a word for anything else."""
    samples = {"int": "7", "uuid": "0b0e6f1c-9d4e-4c39-8c2e-3f1a2b3c4d5e", "path": "a/b"}
    return re.sub(r"\{(\w+)(?::(\w+))?\}", lambda found: samples.get(found[2] or "", "x"), template)


def test_no_two_routes_match_one_address(portal: FastAPI) -> None:
    routes = list(_routes(portal))
    assert len(routes) > 100
    shared = []
    for route in routes:
        address = _example(route.path)
        matching = [
            other.path
            for other in routes
            if other.path_regex.match(address) and other.methods & route.methods
        ]
        if matching != [route.path]:
            shared.append((sorted(route.methods), address, matching))
    assert shared == []


def test_every_page_is_registered_by_the_web_registry(portal: FastAPI) -> None:
    """Pages are registered in one place (app/web/router.py), beside the API's registry and
    the operations endpoints."""
    registered = {
        (route.path, frozenset(route.methods))
        for pages in web_registry.ROUTERS
        for route in pages.routes
        if getattr(route, "methods", None)
    }
    outside = {
        (route.path, frozenset(route.methods))
        for route in _routes(portal)
        if not route.path.startswith(("/api/", "/healthz", "/metrics"))
    }
    assert outside - registered == set()
