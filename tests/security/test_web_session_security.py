"""CSRF on every state-changing page, session fixation, cookie flags, throttling, token limits.

State-changing routes are enumerated from ``app.routes`` (everything outside ``/api`` and
``/signin``), so a new form is covered without editing this file. Each is posted by a
signed-in site administrator without a token and with a wrong one: 403, and not one row of
any table changes.
"""

from __future__ import annotations

import threading
from datetime import timedelta
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.models.announcements import Announcement
from app.models.api_tokens import ApiToken
from app.models.base import utc_now
from app.models.catalogue import metadata
from app.models.interactive import InteractiveSessionViewer
from app.models.notifications import NotificationRule
from app.models.workflows import Workflow, WorkflowRun
from app.scheduler.fake import FakeScheduler
from app.scheduler.registry import SchedulerRegistry
from app.tokens import service as tokens
from app.users.service import actor_for
from app.web.settings import WebSettings
from tests.factories import (
    DEFAULT_CLUSTER,
    fake_registry,
    make_app_session,
    make_job,
    make_template,
)
from tests.integration.web.conftest import csrf_from, sign_in
from tests.portal import PortalProcess
from tests.security.routes import STATE_CHANGING, all_routes
from tests.world import World

SESSION_COOKIE = "portal_session"
# httpx files cookies from http://testserver under this domain.
HOST = "testserver.local"


@pytest.fixture
def registry() -> SchedulerRegistry:
    return fake_registry(FakeScheduler(accounts={"alice": ["physics"]}))


async def _snapshot(sessionmaker: async_sessionmaker[AsyncSession]) -> dict[str, list[Any]]:
    async with sessionmaker() as session:
        return {
            table.name: sorted(map(repr, (await session.execute(select(table))).all()))
            for table in metadata.sorted_tables
        }


async def _path_values(session: AsyncSession, people: World) -> dict[str, str]:
    template = await make_template(session, people.alice, name="csrf-target")
    job = await make_job(session, people.alice, people.physics)
    app_session = await make_app_session(session, people.alice, people.physics)
    rule = NotificationRule(user_id=people.alice.id, event="ended", channel="email")
    step = {"name": "one", "script": "#!/bin/bash\ntrue\n", "args": [], "after": []}
    workflow = Workflow(
        project_id=people.physics.id, owner_user_id=people.alice.id, name="w", steps=[step]
    )
    notice = Announcement(body="Maintenance on Tuesday")
    session.add_all([rule, workflow, notice])
    await session.flush()
    viewer = InteractiveSessionViewer(session_id=app_session.id, user_id=people.carol.id)
    session.add(viewer)
    await session.flush()
    run = WorkflowRun(workflow_id=workflow.id, owner_user_id=people.alice.id)
    session.add(run)
    created = await tokens.create_token(
        session, await actor_for(session, people.alice), name="t", scopes=["read"], lifetime_days=1
    )
    await session.commit()
    return {
        "template_id": str(template.id),
        "job_id": str(job.id),
        "action": "cancel",
        "user_id": str(people.alice.id),
        "project_id": str(people.physics.id),
        "token_id": str(created.token.id),
        "session_id": str(app_session.id),
        "session_uuid": app_session.uuid,
        "viewer_id": str(viewer.id),
        "rule_id": str(rule.id),
        "workflow_id": str(workflow.id),
        "run_id": str(run.id),
        "announcement_id": str(notice.id),
        "app_name": "jupyterlab",
        "path": "api/kernels",
        "cluster": "testcluster",
        "upload_id": "0" * 32,
    }


async def test_every_state_changing_page_route_needs_the_csrf_token(
    app: FastAPI,
    client: httpx.AsyncClient,
    people: World,
    session: AsyncSession,
    sessionmaker: async_sessionmaker[AsyncSession],
) -> None:
    values = await _path_values(session, people)
    await sign_in(client, "admin")
    routes = [
        r
        for r in all_routes(app)
        if r.method in STATE_CHANGING
        and not r.is_api
        and r.path != "/signin"
        # Relayed to the user's own app, which has its own XSRF defence; the proxy refuses
        # other sites by origin instead (tests/integration/interactive/test_app_proxy_routes).
        and r.name != "app_proxy"
    ]
    assert len(routes) >= 15, [r.path for r in routes]
    before = await _snapshot(sessionmaker)
    for route in routes:
        url = route.url(values)
        wrong = {"csrf_token": "forged", "name": "x", "login": "mallory"}
        attempts = [
            await client.request(route.method, url, data={"name": "x", "login": "mallory"}),
            await client.request(route.method, url, data=wrong),
            await client.request(route.method, url, data=wrong, headers={"X-CSRF-Token": "x"}),
        ]
        assert [a.status_code for a in attempts] == [403, 403, 403], route.path
    assert await _snapshot(sessionmaker) == before


async def test_sign_in_never_keeps_the_session_cookie_it_was_given(
    client: httpx.AsyncClient, people: World
) -> None:
    client.cookies.set(SESSION_COOKIE, "attacker-chosen-value", domain=HOST)
    form = await client.get("/signin")
    data = {"login": "carol", "password": "secret-pass", "csrf_token": csrf_from(form.text)}
    assert (await client.post("/signin", data=data)).status_code == 303
    first = client.cookies[SESSION_COOKIE]
    assert first != "attacker-chosen-value"
    # Signing in again from a signed-in browser (a shared machine) replaces the session too.
    csrf = csrf_from((await client.get("/settings/tokens")).text)
    data = {"login": "alice", "password": "secret-pass", "csrf_token": csrf}
    assert (await client.post("/signin", data=data)).status_code == 303
    assert client.cookies[SESSION_COOKIE] != first
    client.cookies.set(SESSION_COOKIE, first, domain=HOST)
    assert (await client.get("/templates")).status_code == 303, "the earlier session lives on"


def _session_cookie(response: httpx.Response) -> str:
    return next(h for h in response.headers.get_list("set-cookie") if SESSION_COOKIE in h)


async def test_cookie_flags_over_http(client: httpx.AsyncClient, people: World) -> None:
    form = await client.get("/signin")
    data = {"login": "alice", "password": "secret-pass", "csrf_token": csrf_from(form.text)}
    plain = _session_cookie(await client.post("/signin", data=data))
    assert "HttpOnly" in plain and "samesite=lax" in plain.lower() and "Secure" not in plain


# Behind a TLS-terminating proxy that sends no X-Forwarded-Proto.
@pytest.mark.parametrize("web_settings", [WebSettings(secure_cookies=True)])
async def test_cookie_flags_forced_secure(client: httpx.AsyncClient, people: World) -> None:
    form = await client.get("/signin")
    forced = next(h for h in form.headers.get_list("set-cookie") if "portal_csrf=" in h)
    assert "Secure" in forced and "HttpOnly" in forced


def _set_cookie(response: httpx.Response, name: str) -> str:
    return next(h for h in response.headers.get_list("set-cookie") if h.startswith(f"{name}="))


# An interactive app's host under the portal's own domain (apps.portal.example.org) can set a
# cookie for the parent domain from its pages' script, which the proxy never sees.
@pytest.mark.parametrize("web_settings", [WebSettings(secure_cookies=True)])
async def test_over_tls_the_portal_reads_only_cookies_no_other_host_can_plant(
    client: httpx.AsyncClient, people: World
) -> None:
    form = await client.get("/signin")
    anon = _set_cookie(form, "__Host-portal_csrf").split(";")[0]
    data = {"login": "alice", "password": "secret-pass", "csrf_token": csrf_from(form.text)}
    answer = await client.post("/signin", data=data, headers={"Cookie": anon})
    cookie = _set_cookie(answer, "__Host-portal_session")
    value = cookie.split(";")[0].split("=", 1)[1]
    client.cookies.clear()
    own = await client.get("/settings/tokens", headers={"Cookie": f"__Host-portal_session={value}"})
    planted = await client.get("/settings/tokens", headers={"Cookie": f"portal_session={value}"})

    assert answer.status_code == 303
    assert "Secure" in cookie and "Path=/" in cookie and "domain" not in cookie.lower()
    assert own.status_code == 200
    assert planted.status_code == 303, "a cookie without the prefix may come from another host"


# Over plain HTTP a script on an app's host under the portal's name (s-….apps.portal.test)
# can set portal_session for the parent domain: the browser then sends both cookies.
async def test_a_planted_second_session_cookie_signs_in_no_one(
    client: httpx.AsyncClient, people: World
) -> None:
    await sign_in(client, "carol")
    carols = client.cookies[SESSION_COOKIE]
    await sign_in(client, "alice")
    alices = client.cookies[SESSION_COOKIE]
    client.cookies.clear()

    async def tokens_page(cookie: str) -> httpx.Response:
        return await client.get("/settings/tokens", headers={"Cookie": cookie})

    own = await tokens_page(f"{SESSION_COOKIE}={alices}")
    both = [
        await tokens_page(f"{SESSION_COOKIE}={alices}; {SESSION_COOKIE}={carols}"),
        await tokens_page(f"{SESSION_COOKIE}={carols}; {SESSION_COOKIE}={alices}"),
    ]
    assert own.status_code == 200 and ">alice<" in own.text
    assert [page.status_code for page in both] == [303, 303]


@pytest.mark.slurm
def test_forwarded_https_from_the_local_proxy_makes_cookies_secure(
    live_portal: PortalProcess,
) -> None:
    """The portal believes X-Forwarded-Proto from its configured proxy (127.0.0.1 here)."""
    with httpx.Client(base_url=live_portal.base_url, timeout=30) as http:
        proxied = {"X-Forwarded-Proto": "https"}
        form = http.get("/signin", headers=proxied)
        anon = form.headers.get_list("set-cookie")
        assert any("portal_csrf=" in c and "Secure" in c for c in anon), anon
        # The client speaks plain HTTP to the proxy's side, so it would withhold Secure cookies.
        anon_cookie = {"Cookie": f"__Host-portal_csrf={form.cookies['__Host-portal_csrf']}"}
        data = {"login": "alice", "password": "alice-demo", "csrf_token": csrf_from(form.text)}
        answer = http.post("/signin", data=data, headers=proxied | anon_cookie)
    assert answer.status_code == 303
    cookie = _session_cookie(answer)
    assert "Secure" in cookie and "HttpOnly" in cookie and "samesite=lax" in cookie.lower()


async def test_repeated_failures_block_even_the_right_password(
    client: httpx.AsyncClient, people: World
) -> None:
    async def attempt(password: str) -> int:
        form = await client.get("/signin")
        data = {"login": "dave", "password": password, "csrf_token": csrf_from(form.text)}
        return (await client.post("/signin", data=data)).status_code

    assert [await attempt(f"guess-{i}") for i in range(5)] == [401] * 5
    assert await attempt("secret-pass") == 429
    assert SESSION_COOKIE not in client.cookies


async def test_password_checks_run_off_the_event_loop(
    client: httpx.AsyncClient, people: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A wave of sign-ins must not stall every other request while Argon2 runs."""
    from app.security import is_password_correct
    from app.users import service as users

    threads: list[bool] = []
    real = is_password_correct

    def recording(password_hash: str | None, password: str) -> bool:
        threads.append(threading.current_thread() is threading.main_thread())
        return real(password_hash, password)

    monkeypatch.setattr(users, "is_password_correct", recording)
    for login, password in (("alice", "secret-pass"), ("alice", "wrong"), ("nobody", "x")):
        form = await client.get("/signin")
        data = {"login": login, "password": password, "csrf_token": csrf_from(form.text)}
        assert (await client.post("/signin", data=data)).status_code in (303, 401)
        client.cookies.clear()
    assert threads == [False, False, False]


async def _token(session: AsyncSession, people: World, name: str, scopes: list[str]) -> str:
    created = await tokens.create_token(
        session, await actor_for(session, people.alice), name=name, scopes=scopes, lifetime_days=1
    )
    await session.commit()
    return created.secret


async def test_read_token_cannot_change_anything_and_expired_token_is_401(
    app: FastAPI, client: httpx.AsyncClient, people: World, session: AsyncSession
) -> None:
    values = await _path_values(session, people)
    values |= {"version": "1", "cluster": DEFAULT_CLUSTER, "stream": "stdout"}
    read = {"Authorization": f"Bearer {await _token(session, people, 'reader', ['read'])}"}
    api_writes = [r for r in all_routes(app) if r.is_api and r.method in STATE_CHANGING]
    assert api_writes
    for route in api_writes:
        answer = await client.request(route.method, route.url(values), headers=read, json={})
        assert answer.status_code == 403, (route.path, answer.status_code)
    submit = {"project_id": people.physics.id, "script": "#!/bin/bash\ntrue\n", "name": "x"}
    refused = await client.post("/api/v1/jobs", json=submit, headers=read)
    assert refused.status_code == 403 and "submit" in refused.json()["detail"]
    expiring = {"Authorization": f"Bearer {await _token(session, people, 'expiring', ['submit'])}"}
    assert (await client.get("/api/v1/me", headers=expiring)).status_code == 200
    token = (await session.scalars(select(ApiToken).where(ApiToken.name == "expiring"))).one()
    token.expires_at = utc_now() - timedelta(seconds=1)
    await session.commit()
    expired = await client.get("/api/v1/me", headers=expiring)
    assert expired.status_code == 401 and expired.headers["www-authenticate"].startswith("Bearer")
    assert (await client.post("/api/v1/jobs", json=submit, headers=expiring)).status_code == 401
