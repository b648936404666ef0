"""Attack: odd input at every route, looking for a 500 (and the stack trace or lock-up that
may come with it): huge ids in every path parameter and id-like query parameter, far-future
dates, lone surrogates, odd ``next`` values at sign-in. Routes are enumerated from the app,
so a new one is tried without editing this file. Every answer must be a 4xx or a page.
"""

from __future__ import annotations

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.scheduler.fake import FakeScheduler
from app.scheduler.registry import SchedulerRegistry
from app.security import hash_password
from app.tokens import service as tokens
from app.users.service import actor_for
from tests.factories import add_member, fake_registry, make_project, make_user
from tests.integration.web.conftest import csrf_from, sign_in
from tests.security.routes import STATE_CHANGING, all_routes

HUGE = "9999999999999999999999999"
ID_QUERIES = ("before", "project", "project_id", "template_id", "from_job", "version", "user")
FAR_DATES = ("9999-12-31", "0001-01-01", "99999-01-01")


@pytest.fixture
def registry() -> SchedulerRegistry:
    return fake_registry(FakeScheduler(accounts={"alice": ["physics"]}))


async def _admin_token(sessionmaker: async_sessionmaker[AsyncSession]) -> str:
    async with sessionmaker() as session:
        password = hash_password("secret-pass")
        admin = await make_user(
            session, "alice", cluster_username="alice", password_hash=password, is_site_admin=True
        )
        await add_member(session, admin, await make_project(session, "physics"), role="manager")
        created = await tokens.create_token(
            session,
            await actor_for(session, admin),
            name="fuzz",
            scopes=["read", "submit", "admin"],
            lifetime_days=1,
        )
        await session.commit()
        return created.secret


async def _request(
    client: httpx.AsyncClient, method: str, url: str, token: str, csrf: str, **query: str
) -> httpx.Response:
    if url.startswith("/api/"):
        headers = {"Authorization": f"Bearer {token}"}
        body = {} if method in STATE_CHANGING else None
        return await client.request(method, url, headers=headers, json=body, params=query)
    data = {"csrf_token": csrf} if method in STATE_CHANGING else None
    return await client.request(method, url, data=data, params=query)


async def test_huge_ids_and_far_dates_never_give_a_500(
    app: FastAPI, client: httpx.AsyncClient, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    token = await _admin_token(sessionmaker)
    csrf = await sign_in(client, "alice")
    problems = []
    for route in all_routes(app):
        if route.path.endswith("/stream") or route.path in ("/signout",):
            continue  # streams never end by themselves; sign-out would end the session
        url = route.url({name: HUGE for name in route.parameters})
        attempts = [{}, {name: HUGE for name in ID_QUERIES}]
        attempts += [{"since": day, "until": day, "start": day, "end": day} for day in FAR_DATES]
        for query in attempts:
            answer = await _request(client, route.method, url, token, csrf, **query)
            if answer.status_code >= 500:
                problems.append(f"{route.method} {url} {query}: {answer.status_code}")
    assert problems == [], "\n".join(problems)


@pytest.mark.parametrize("text", ["\ud800", "a\udfffb", "\udc80\udc80"])
async def test_lone_surrogates_in_parameters_are_refused_with_a_422(
    client: httpx.AsyncClient, sessionmaker: async_sessionmaker[AsyncSession], text: str
) -> None:
    token = await _admin_token(sessionmaker)
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
    # json.dumps escapes a lone surrogate as \\udXXX, which JSON allows and Python decodes.
    import json

    body = json.dumps({"script": "#!/bin/bash\n", "project_id": 1, "name": text})
    answer = await client.post("/api/v1/jobs", content=body, headers=headers)
    assert answer.status_code == 422, answer.text
    templated = json.dumps({"template_id": 1, "project_id": 1, "parameters": {"message": text}})
    answer = await client.post("/api/v1/jobs", content=templated, headers=headers)
    assert 400 <= answer.status_code < 500, answer.text


# Percent-encoded as they travel; %ED%A0%80 is a lone surrogate in (invalid) UTF-8.
@pytest.mark.parametrize(
    "target",
    ["%2F%2Fevil.example", "%2F%5Cevil.example", "https%3A%2F%2Fevil.example", "%00",
     "%2F%250d%250aSet-Cookie%3Ax", "%2F" + "a" * 1999, "%ED%A0%80", "javascript%3Aalert(1)",
     "%2Fjobs%3F%FF", "%2F%09%2Fevil.example"],
)  # fmt: skip
async def test_odd_next_values_at_sign_in_stay_on_the_site(
    client: httpx.AsyncClient, sessionmaker: async_sessionmaker[AsyncSession], target: str
) -> None:
    await _admin_token(sessionmaker)
    form = await client.get(f"/signin?next={target}")
    assert form.status_code == 200
    body = f"login=alice&password=secret-pass&csrf_token={csrf_from(form.text)}&next={target}"
    headers = {"Content-Type": "application/x-www-form-urlencoded"}
    answer = await client.post("/signin", content=body.encode(), headers=headers)
    assert answer.status_code == 303
    location = answer.headers["location"]
    assert location.startswith("/") and not location.startswith(("//", "/\\"))
