"""The application factory: lifespan, health, pages, static files and error rendering."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import httpx
import pytest
from fastapi import APIRouter, FastAPI
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.config import ConfigError, Settings
from app.deps import SessionDep
from app.errors import Conflict, NotFound, ValidationFailed
from app.main import create_app
from app.models.clusters import ClusterStatus
from app.models.users import User
from app.scheduler.fake import FakeScheduler
from app.wiring import services_of
from tests.factories import fake_registry

probe = APIRouter()


@probe.get("/api/v1/probe/missing")
@probe.get("/probe/missing")
async def raise_not_found() -> None:
    raise NotFound("No job 42.")


@probe.get("/api/v1/probe/invalid")
async def raise_validation_failed() -> None:
    raise ValidationFailed("Check the form.", fields={"cpus": "must be at least 1"})


@probe.get("/api/v1/probe/typed")
@probe.get("/probe/typed")
async def require_integer(count: int) -> dict[str, int]:
    return {"count": count}


@probe.get("/api/v1/probe/crash")
@probe.get("/probe/crash")
async def crash() -> None:
    raise RuntimeError("secret internal detail")


@probe.post("/probe/users/{login}")
async def add_user(login: str, session: SessionDep) -> dict[str, str]:
    session.add(User(login=login, display_name=login))
    return {"login": login}


@probe.post("/probe/users/{login}/conflict")
async def add_user_then_conflict(login: str, session: SessionDep) -> None:
    session.add(User(login=login, display_name=login))
    await session.flush()
    raise Conflict("Changed my mind.")


@pytest.fixture
def probed_app(app: FastAPI) -> FastAPI:
    app.include_router(probe)
    return app


async def count_users(sessionmaker: async_sessionmaker[AsyncSession]) -> int:
    async with sessionmaker() as session:
        return (await session.scalar(select(func.count()).select_from(User))) or 0


async def test_healthz_reports_database_ok_and_no_clusters(client: httpx.AsyncClient) -> None:
    response = await client.get("/healthz")

    assert response.status_code == 200
    assert response.json() == {"database": "ok", "clusters": {}, "tasks": {}}


async def test_healthz_reports_what_the_poller_recorded(
    client: httpx.AsyncClient, session: AsyncSession
) -> None:
    contact = datetime(2026, 11, 22, 4, 0, tzinfo=UTC)
    session.add(ClusterStatus(cluster="good", last_contact_at=contact))
    session.add(
        ClusterStatus(
            cluster="down", last_contact_at=contact, consecutive_failures=3, last_error="timeout"
        )
    )
    await session.commit()

    clusters = (await client.get("/healthz")).json()["clusters"]

    assert clusters["good"] == {
        "last_contact_at": contact.isoformat(),
        "reachable": True,
        "last_error": None,
    }
    assert clusters["down"]["reachable"] is False
    assert clusters["down"]["last_error"] == "timeout"


async def test_healthz_is_503_when_the_database_is_unreachable() -> None:
    settings = Settings(database_url="postgresql+psycopg://postgres@127.0.0.1:1/nowhere")
    app = create_app(settings)
    transport = httpx.ASGITransport(app=app)
    async with (
        app.router.lifespan_context(app),
        httpx.AsyncClient(transport=transport, base_url="http://t") as client,
    ):
        response = await client.get("/healthz")

    assert response.status_code == 503
    assert response.json()["database"] == "error"


async def test_home_page_is_an_accessible_html_page(client: httpx.AsyncClient) -> None:
    response = await client.get("/")

    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/html")
    assert 'href="#main"' in response.text
    assert '<main id="main"' in response.text
    assert "/static/vendor/htmx.min.js" in response.text


async def test_static_files_serve_the_vendored_htmx(client: httpx.AsyncClient) -> None:
    response = await client.get("/static/vendor/htmx.min.js")

    assert response.status_code == 200
    assert "htmx" in response.text[:2000]


async def test_responses_carry_security_headers(client: httpx.AsyncClient) -> None:
    response = await client.get("/")

    assert "frame-ancestors 'none'" in response.headers["content-security-policy"]
    assert response.headers["x-content-type-options"] == "nosniff"


async def test_unknown_page_renders_the_html_not_found_page(client: httpx.AsyncClient) -> None:
    response = await client.get("/no/such/page")

    assert response.status_code == 404
    assert "<html" in response.text
    assert "Page not found" in response.text


async def test_unknown_api_path_is_json_not_found(client: httpx.AsyncClient) -> None:
    response = await client.get("/api/v1/nothing-here")

    assert response.status_code == 404
    assert response.json() == {"error": "NotFound", "detail": "Not found."}


async def test_portal_error_under_api_is_json(
    probed_app: FastAPI, client: httpx.AsyncClient
) -> None:
    response = await client.get("/api/v1/probe/missing")

    assert response.status_code == 404
    assert response.json() == {"error": "NotFound", "detail": "No job 42."}


async def test_validation_failed_under_api_lists_the_fields(
    probed_app: FastAPI, client: httpx.AsyncClient
) -> None:
    response = await client.get("/api/v1/probe/invalid")

    assert response.status_code == 422
    assert response.json() == {
        "error": "ValidationFailed",
        "detail": "Check the form.",
        "fields": {"cpus": "must be at least 1"},
    }


async def test_request_validation_error_is_a_422_in_the_same_shape(
    probed_app: FastAPI, client: httpx.AsyncClient
) -> None:
    response = await client.get("/api/v1/probe/typed", params={"count": "many"})

    assert response.status_code == 422
    body = response.json()
    assert body["error"] == "ValidationFailed"
    assert set(body["fields"]) == {"count"}


async def test_request_validation_error_on_a_page_is_an_html_422(
    probed_app: FastAPI, client: httpx.AsyncClient
) -> None:
    response = await client.get("/probe/typed", params={"count": "many"})

    assert response.status_code == 422
    assert "<html" in response.text
    assert "count" in response.text


async def test_portal_error_on_a_page_is_an_html_page(
    probed_app: FastAPI, client: httpx.AsyncClient
) -> None:
    response = await client.get("/probe/missing")

    assert response.status_code == 404
    assert "<html" in response.text
    assert "No job 42." in response.text


async def test_htmx_request_gets_only_the_error_fragment_as_a_toast(
    probed_app: FastAPI, client: httpx.AsyncClient
) -> None:
    response = await client.get("/probe/missing", headers={"HX-Request": "true"})

    assert response.status_code == 404
    assert "<html" not in response.text
    assert "No job 42." in response.text
    assert response.headers["hx-retarget"] == "#toasts"


async def test_unhandled_error_is_a_500_page_without_internals(
    probed_app: FastAPI, client: httpx.AsyncClient
) -> None:
    page = await client.get("/probe/crash")
    api = await client.get("/api/v1/probe/crash")

    assert page.status_code == 500
    assert "secret internal detail" not in page.text
    assert "Traceback" not in page.text
    assert api.status_code == 500
    assert api.json()["error"] == "InternalError"


async def test_session_dependency_commits_after_a_successful_request(
    probed_app: FastAPI, client: httpx.AsyncClient, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    response = await client.post("/probe/users/alice")

    assert response.status_code == 200
    assert await count_users(sessionmaker) == 1


async def test_session_dependency_rolls_back_when_the_request_fails(
    probed_app: FastAPI, client: httpx.AsyncClient, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    response = await client.post("/probe/users/alice/conflict")

    assert response.status_code == 409
    assert await count_users(sessionmaker) == 0


def test_create_app_refuses_a_missing_clusters_file(tmp_path: Path) -> None:
    settings = Settings(clusters_file=tmp_path / "absent.toml")

    with pytest.raises(ConfigError) as raised:
        create_app(settings)

    assert raised.value.problems == [
        f"PORTAL_CLUSTERS_FILE: {tmp_path / 'absent.toml'} does not exist"
    ]


def test_create_app_builds_everything_it_serves_with(settings: Settings) -> None:
    app = create_app(settings)
    services = services_of(app)

    assert services.settings is settings
    assert services.clusters == {} and services.cluster_names == ()
    assert services.engine.url.render_as_string(hide_password=False) == settings.database_url


def test_create_app_serves_the_clusters_of_a_given_registry(settings: Settings) -> None:
    app = create_app(settings, registry=fake_registry(FakeScheduler(), "elsewhere"))

    assert services_of(app).cluster_names == ("elsewhere",)
