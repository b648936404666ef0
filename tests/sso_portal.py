"""A portal with single sign-on in a thread of the test process, and a sign-in at the test
provider scripted over HTTP, for the tests of ADR 0028."""

from __future__ import annotations

import asyncio
import re
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from html import unescape
from pathlib import Path
from typing import Any
from urllib.parse import urljoin, urlsplit

import httpx
import uvicorn

from app.config import Settings
from app.db import create_engine, create_sessionmaker, migrate_to_head
from app.main import create_app
from app.scheduler.fake import FakeScheduler
from app.seed import seed_demo
from app.web.settings import WebSettings
from tests.factories import fake_registry

CLIENT_ID = "hpc-portal"
CLIENT_SECRET = "portal-client-secret-for-tests-only"


async def _seed(url: str) -> None:
    engine = create_engine(url)
    try:
        await seed_demo(create_sessionmaker(engine), ["testcluster"])
    finally:
        await engine.dispose()


def sso_settings(database_url: str, issuer: str, **overrides: Any) -> Settings:
    values: dict[str, Any] = {
        "env": "dev",
        "database_url": database_url,
        "run_poller_in_web": False,
        "oidc_issuer": issuer,
        "oidc_client_id": CLIENT_ID if issuer else "",
        "oidc_client_secret": CLIENT_SECRET,
        "oidc_provider_name": "Test IdP",
        "oidc_timeout": 5.0,
        **overrides,
    }
    return Settings(**values)


@contextmanager
def running_portal(
    folder: Path,
    port: int,
    issuer: str,
    *,
    web_settings: WebSettings | None = None,
    **overrides: Any,
) -> Iterator[str]:
    """The demo portal (SQLite, a fake cluster) on ``port`` signing in at ``issuer`` (none:
    ``""``), with ``web_settings`` for its browser surface (a trusted proxy, say)."""
    folder.mkdir(parents=True, exist_ok=True)
    url = f"sqlite+aiosqlite:///{folder / 'portal.db'}"
    migrate_to_head(url)
    asyncio.run(_seed(url))
    settings = sso_settings(url, issuer, **overrides)
    registry = fake_registry(FakeScheduler())
    app = create_app(settings, registry=registry, web_settings=web_settings or WebSettings())
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 60
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.05)
    assert server.started, "the portal did not start"
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)


def _login_form_action(html: str) -> str:
    found = re.search(r'<form method="post" action="([^"]+)"', html)
    assert found, f"no login form at the provider: {html[:300]}"
    return unescape(found.group(1))


def provider_answer(
    client: httpx.Client, portal: str, username: str, password: str, next_path: str = ""
) -> str:
    """Sign in at the provider from the portal's button; the callback address it sends back,
    not yet followed (so a test can follow it, twice, or from another browser)."""
    start = f"{portal}/signin/sso" + (f"?next={next_path}" if next_path else "")
    answer = client.get(start)
    for _hop in range(12):
        location = answer.headers.get("location")
        if answer.status_code == 200 and "/interaction/" in str(answer.url):
            action = urljoin(str(answer.url), _login_form_action(answer.text))
            answer = client.post(action, data={"username": username, "password": password})
            continue
        assert location, f"stopped at {answer.url}: {answer.status_code} {answer.text[:300]}"
        target = urljoin(str(answer.url), location)
        if target.startswith(f"{portal}/signin/sso/callback"):
            return target
        answer = client.get(target)
    raise AssertionError("the provider never sent the browser back")


def is_portal(url: str, portal: str) -> bool:
    return urlsplit(url).netloc == urlsplit(portal).netloc
