"""Error pages in the visitor's own layout, malformed ids as plain 404s, and the way in."""

from __future__ import annotations

import httpx
import pytest
from fastapi import APIRouter, FastAPI
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.models.jobs import Job
from tests.factories import make_job
from tests.integration.api.conftest import issue_token
from tests.integration.web.conftest import sign_in
from tests.world import World

SIGN_OUT = '<button type="submit" class="link-button">Sign out</button>'
SIGN_IN_LINK = 'class="nav-signin" href="http://testserver/signin"'

crashing = APIRouter()


@crashing.get("/probe/crash-page")
async def crash_page() -> None:
    raise RuntimeError("secret internal detail")


@pytest.fixture
def crashing_app(app: FastAPI) -> FastAPI:
    app.include_router(crashing)
    return app


def assert_signed_in_layout(html: str, login: str) -> None:
    assert SIGN_OUT in html
    assert f'<span class="nav-login">{login}</span>' in html
    assert 'href="http://testserver/dashboard"' in html
    assert SIGN_IN_LINK not in html


async def _bobs_job(sessionmaker: async_sessionmaker[AsyncSession], people: World) -> Job:
    async with sessionmaker() as session:
        job = await make_job(session, people.bob, people.chemistry, name="bobs-secret")
        await session.commit()
    return job


async def test_signed_out_home_page_has_a_sign_in_link_and_button(
    client: httpx.AsyncClient, people: World
) -> None:
    page = await client.get("/")

    assert page.status_code == 200
    assert SIGN_IN_LINK in page.text
    assert '<a class="button" href="http://testserver/signin">Sign in</a>' in page.text


async def test_not_found_and_another_users_job_keep_the_signed_in_layout(
    client: httpx.AsyncClient, people: World, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    job = await _bobs_job(sessionmaker, people)
    await sign_in(client, "alice")

    unknown = await client.get("/no/such/page")
    hidden = await client.get(f"/jobs/{job.id}")

    assert unknown.status_code == 404 and hidden.status_code == 404
    for page in (unknown, hidden):
        assert_signed_in_layout(page.text, "alice")
        assert "<h1>Page not found</h1>" in page.text
    assert "No such job." in hidden.text and "bobs-secret" not in hidden.text


async def test_forbidden_page_keeps_the_signed_in_layout(
    client: httpx.AsyncClient, people: World
) -> None:
    await sign_in(client, "carol")

    response = await client.get("/admin/users")

    assert response.status_code == 403
    assert_signed_in_layout(response.text, "carol")
    assert "This page is for site administrators." in response.text


async def test_server_error_keeps_the_layout_of_whoever_is_browsing(
    crashing_app: FastAPI, client: httpx.AsyncClient, people: World
) -> None:
    anonymous = await client.get("/probe/crash-page")
    await sign_in(client, "bob")
    signed_in = await client.get("/probe/crash-page")

    assert anonymous.status_code == 500 and signed_in.status_code == 500
    assert SIGN_IN_LINK in anonymous.text and SIGN_OUT not in anonymous.text
    assert_signed_in_layout(signed_in.text, "bob")
    assert "Something went wrong" in signed_in.text
    assert "secret internal detail" not in signed_in.text


async def test_signed_out_error_page_offers_the_sign_in_link(
    client: httpx.AsyncClient, people: World
) -> None:
    response = await client.get("/no/such/page")

    assert response.status_code == 404
    assert SIGN_IN_LINK in response.text
    assert SIGN_OUT not in response.text


@pytest.mark.parametrize(
    ("path", "message"),
    [
        ("/jobs/abc", "No job abc."),
        ("/jobs/abc/status", "No job abc."),
        ("/jobs/0", "No job 0."),
        ("/jobs/99999999999999999999", "No job 99999999999999999999."),
        ("/jobs/abc/resubmit", "No job abc."),
        ("/templates/xyz", "No template xyz."),
        ("/templates/xyz/submit", "No template xyz."),
        ("/settings/tokens/tok/revoke", "No token tok."),
    ],
)
async def test_malformed_id_in_a_page_address_is_a_plain_not_found_page(
    client: httpx.AsyncClient, people: World, path: str, message: str
) -> None:
    await sign_in(client, "alice")

    response = await client.get(path)

    assert response.status_code == 404
    assert f'<p class="lead">{message}</p>' in response.text
    assert "valid integer" not in response.text and "greater than" not in response.text
    assert_signed_in_layout(response.text, "alice")


async def test_malformed_id_for_htmx_is_a_not_found_toast(
    client: httpx.AsyncClient, people: World
) -> None:
    await sign_in(client, "alice")

    response = await client.get("/jobs/abc/resubmit", headers={"HX-Request": "true"})

    assert response.status_code == 404
    assert response.headers["HX-Retarget"] == "#toasts"
    assert '<span class="toast-message">No job abc.</span>' in response.text
    assert "<nav" not in response.text


async def test_api_keeps_its_validation_answer_for_a_malformed_id(
    client: httpx.AsyncClient, people: World, session: AsyncSession
) -> None:
    headers = await issue_token(session, people.alice, ("read",))

    response = await client.get("/api/v1/jobs/abc", headers=headers)

    assert response.status_code == 422
    assert response.json()["error"] == "ValidationFailed"
    assert set(response.json()["fields"]) == {"job_id"}


async def test_a_bad_value_that_names_no_thing_is_a_plain_not_found(
    client: httpx.AsyncClient, people: World, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    job = await _bobs_job(sessionmaker, people)
    await sign_in(client, "bob")

    response = await client.get(f"/jobs/{job.id}/bogus")

    assert response.status_code == 404
    assert '<p class="lead">Not found.</p>' in response.text
