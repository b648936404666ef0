"""Routes reach what the wiring built only through the app/deps.py aliases, so a test's
``app.dependency_overrides`` replaces it for every route that uses it."""

from __future__ import annotations

import httpx
from fastapi import FastAPI
from sqlalchemy.ext.asyncio import AsyncSession

from app.deps import get_apps, get_cluster_names
from app.interactive.definitions import load_definitions
from tests.integration.api.conftest import issue_token
from tests.world import World


async def test_the_welcome_page_lists_the_clusters_an_override_gives(
    app: FastAPI, client: httpx.AsyncClient
) -> None:
    app.dependency_overrides[get_cluster_names] = lambda: ("overridden-cluster",)

    response = await client.get("/")

    assert response.status_code == 200
    assert "<li>overridden-cluster</li>" in response.text


async def test_the_api_lists_the_apps_an_override_gives(
    app: FastAPI, client: httpx.AsyncClient, people: World, session: AsyncSession
) -> None:
    shipped = load_definitions()
    assert shipped, "the portal ships at least one interactive app"
    app.dependency_overrides[get_apps] = lambda: {}
    headers = await issue_token(session, people.alice, ("read",))

    response = await client.get("/api/v1/apps", headers=headers)

    assert response.status_code == 200
    assert response.json() == []
