"""Request bodies: the site's limit everywhere but on the routes that stream, and nobody's
body is read before they are known to be signed in.

Each body here is a generator that counts what the portal pulled from it, so a test sees
whether a refused body was read at all, not only the status it got back.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy.ext.asyncio import AsyncSession

from app.deps import get_files_service
from tests.integration.api.conftest import issue_token
from tests.integration.web.conftest import sign_in
from tests.world import World

HUNDRED_MB = 100 * 1024 * 1024
CHUNK = 64 * 1024
SITE_LIMIT = 4 * 1024 * 1024


@dataclass
class CountedBody:
    """A form of ``size`` bytes, 64 KiB fields (each under the form parser's own limits)."""

    size: int
    pulled: int = 0

    async def chunks(self) -> AsyncIterator[bytes]:
        sent = 0
        field = 0
        while sent < self.size:
            name = f"f{field}=".encode()
            piece = name + b"a" * (min(CHUNK, self.size - sent) - len(name) - 1) + b"&"
            sent += len(piece)
            field += 1
            self.pulled = sent
            yield piece


def _form_headers(size: int) -> dict[str, str]:
    return {"Content-Type": "application/x-www-form-urlencoded", "Content-Length": str(size)}


@pytest.mark.parametrize(
    "path",
    [
        "/apps/sessions/1/end",
        "/settings/notifications",
        # Routes with form or file parameters, which FastAPI parses before any dependency.
        "/admin/import/preview",
        "/admin/users",
        "/jobs/1/resubmit",
    ],
)
async def test_an_anonymous_hundred_megabytes_is_sent_to_sign_in_unread(
    client: httpx.AsyncClient, path: str
) -> None:
    body = CountedBody(HUNDRED_MB)
    response = await client.post(path, content=body.chunks(), headers=_form_headers(HUNDRED_MB))
    assert response.status_code == 303
    assert response.headers["location"].startswith("/signin?next=")
    assert body.pulled == 0


async def test_an_anonymous_htmx_body_gets_401_unread(client: httpx.AsyncClient) -> None:
    body = CountedBody(HUNDRED_MB)
    headers = _form_headers(HUNDRED_MB) | {"HX-Request": "true"}
    response = await client.post("/admin/users", content=body.chunks(), headers=headers)
    assert response.status_code == 401
    assert body.pulled == 0


@pytest.mark.parametrize(
    "headers",
    [{}, {"Authorization": "Bearer hpc_not-a-token"}, {"Authorization": "Basic eDp5"}],
)
async def test_an_api_body_without_a_valid_token_gets_401_unread(
    client: httpx.AsyncClient, headers: dict[str, str]
) -> None:
    size = 3 * 1024 * 1024
    body = CountedBody(size)
    sent = headers | {"Content-Type": "application/json", "Content-Length": str(size)}
    response = await client.post("/api/v1/notifications/rules", content=body.chunks(), headers=sent)
    assert response.status_code == 401
    assert body.pulled == 0


async def test_a_declared_body_over_the_limit_on_an_app_session_form_is_refused_unread(
    client: httpx.AsyncClient, world: World
) -> None:
    await sign_in(client, "alice")
    body = CountedBody(HUNDRED_MB)
    response = await client.post(
        "/apps/sessions/1/end", content=body.chunks(), headers=_form_headers(HUNDRED_MB)
    )
    assert response.status_code == 413
    assert body.pulled == 0


async def test_a_chunked_body_over_the_limit_on_an_app_session_form_stops_at_the_limit(
    client: httpx.AsyncClient, world: World
) -> None:
    await sign_in(client, "alice")
    body = CountedBody(HUNDRED_MB)
    response = await client.post(
        "/apps/sessions/1/end",
        content=body.chunks(),
        headers={"Content-Type": "application/x-www-form-urlencoded"},
    )
    assert response.status_code == 413
    assert body.pulled <= SITE_LIMIT + CHUNK


class CountingFiles:
    """Stands in for the cluster's files: reads a piece whole and says how long it was."""

    async def upload_part(
        self, actor: object, cluster: str, part: object, data: AsyncIterator[bytes]
    ) -> int:
        return sum([len(chunk) async for chunk in data])


PIECE = 6 * 1024 * 1024  # over the site's 4 MiB, under an upload piece's 8 MiB


async def test_an_upload_piece_still_gets_the_upload_protocols_limit_on_both_surfaces(
    app: FastAPI, client: httpx.AsyncClient, session: AsyncSession, world: World
) -> None:
    app.dependency_overrides[get_files_service] = CountingFiles
    upload = f"/files/testcluster/uploads/{uuid.uuid4().hex}"
    query = {"folder": "/home/alice", "offset": 0}
    headers = await issue_token(session, world.alice)
    piece = b"x" * PIECE
    by_api = await client.put(f"/api/v1{upload}", params=query, content=piece, headers=headers)
    assert by_api.status_code == 200, by_api.text
    assert by_api.json()["size"] == PIECE
    csrf = await sign_in(client, "alice")
    by_page = await client.put(upload, params=query, content=piece, headers={"X-CSRF-Token": csrf})
    assert by_page.status_code == 200, by_page.text
    assert by_page.json()["size"] == PIECE
