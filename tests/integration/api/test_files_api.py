"""/api/v1/files on the development cluster, as alice's token: the same use cases as the pages."""

from __future__ import annotations

import hashlib
import os
import uuid
from collections.abc import AsyncIterator

import httpx
import pytest
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from app.config import Settings
from app.models.users import User
from tests.conftest import empty_all_tables
from tests.factories import make_user
from tests.integration.api.conftest import clusters_file, issue_token, serving

pytestmark = pytest.mark.slurm
CLUSTER = "testcluster"


@pytest.fixture
async def db_url(postgresql_database_url: str) -> AsyncIterator[str]:
    # Files live on the cluster; one database backend is enough to prove the surface.
    yield postgresql_database_url
    await empty_all_tables(postgresql_database_url)


@pytest.fixture
async def api(db_url: str, session: AsyncSession) -> AsyncIterator[httpx.AsyncClient]:
    alice = await make_user(session, "alice", cluster_username="alice", cluster=CLUSTER)
    headers = await issue_token(session, alice)
    settings = Settings(
        env="dev", database_url=db_url, clusters_file=clusters_file(), run_poller_in_web=False
    )
    async with serving(settings) as http:
        http.headers.update(headers)
        yield http


@pytest.fixture
async def folder(api: httpx.AsyncClient) -> AsyncIterator[str]:
    path = f"/home/alice/portal-api-{uuid.uuid4().hex[:8]}"
    made = await api.post(f"/api/v1/files/{CLUSTER}/folders", json={"path": path})
    assert made.status_code == 201, made.text
    yield path
    listing = (await api.get(f"/api/v1/files/{CLUSTER}", params={"path": path})).json()
    for entry in listing["entries"]:
        await api.delete(f"/api/v1/files/{CLUSTER}", params={"path": entry["path"]})
    await api.delete(f"/api/v1/files/{CLUSTER}", params={"path": path})


async def test_upload_in_pieces_list_and_download_with_the_same_checksum(
    api: httpx.AsyncClient, folder: str
) -> None:
    data = os.urandom(9 * 1024 * 1024 + 5)
    upload = f"/api/v1/files/{CLUSTER}/uploads/{uuid.uuid4().hex}"
    offset = 0
    for start in range(0, len(data), 8 << 20):
        piece = data[start : start + (8 << 20)]
        sent = await api.put(upload, params={"folder": folder, "offset": offset}, content=piece)
        assert sent.status_code == 200, sent.text
        offset = sent.json()["size"]
    body = {"folder": folder, "name": "data.bin", "size": len(data)}
    done = await api.post(f"{upload}/complete", json=body)
    assert done.status_code == 201, done.text
    assert done.json()["size"] == len(data)
    listing = (await api.get(f"/api/v1/files/{CLUSTER}", params={"path": folder})).json()
    assert [entry["name"] for entry in listing["entries"]] == ["data.bin"]
    download = await api.get(
        f"/api/v1/files/{CLUSTER}/download", params={"path": f"{folder}/data.bin"}
    )
    assert hashlib.sha256(download.content).hexdigest() == hashlib.sha256(data).hexdigest()


async def test_a_piece_over_the_part_limit_is_refused(api: httpx.AsyncClient, folder: str) -> None:
    upload = f"/api/v1/files/{CLUSTER}/uploads/{uuid.uuid4().hex}"
    sent = await api.put(
        upload, params={"folder": folder, "offset": 0}, content=b"x" * ((8 << 20) + 1)
    )
    assert sent.status_code == 413


async def test_a_piece_out_of_step_says_where_to_go_on(api: httpx.AsyncClient, folder: str) -> None:
    upload = f"/api/v1/files/{CLUSTER}/uploads/{uuid.uuid4().hex}"
    await api.put(upload, params={"folder": folder, "offset": 0}, content=b"abc")
    late = await api.put(upload, params={"folder": folder, "offset": 7}, content=b"d")
    assert late.status_code == 409
    assert late.json()["expected_offset"] == 3
    assert (await api.delete(upload, params={"folder": folder})).status_code == 204


async def test_paging_rename_and_refusals(api: httpx.AsyncClient, folder: str) -> None:
    for name in ("b", "a", "c"):
        await api.post(f"/api/v1/files/{CLUSTER}/folders", json={"path": f"{folder}/{name}"})
    page = (await api.get(f"/api/v1/files/{CLUSTER}", params={"path": folder, "limit": 2})).json()
    assert [entry["name"] for entry in page["entries"]] == ["a", "b"]
    assert page["total"] == 3 and page["next_offset"] == 2
    renamed = await api.post(
        f"/api/v1/files/{CLUSTER}/rename", json={"path": f"{folder}/c", "new_path": f"{folder}/d"}
    )
    assert renamed.status_code == 200 and renamed.json()["name"] == "d"
    clash = await api.post(
        f"/api/v1/files/{CLUSTER}/rename", json={"path": f"{folder}/a", "new_path": f"{folder}/b"}
    )
    assert clash.status_code == 409
    outside = await api.get(f"/api/v1/files/{CLUSTER}", params={"path": "/etc"})
    assert outside.status_code == 403
    assert outside.json()["detail"] == "/etc is outside the folders the portal may open."
    dotdot = await api.get(f"/api/v1/files/{CLUSTER}", params={"path": f"{folder}/../.."})
    assert dotdot.status_code == 422
    missing = await api.get(f"/api/v1/files/{CLUSTER}/stat", params={"path": f"{folder}/nope"})
    assert missing.status_code == 404


async def test_a_read_only_token_cannot_change_files(
    api: httpx.AsyncClient, session: AsyncSession, folder: str
) -> None:
    alice = (await session.execute(select(User).where(User.login == "alice"))).scalar_one()
    reader = await issue_token(session, alice, scopes=("read",))
    listed = await api.get(f"/api/v1/files/{CLUSTER}/roots", headers=reader)
    assert listed.status_code == 200 and listed.json()[0]["label"] == "Home"
    made = await api.post(
        f"/api/v1/files/{CLUSTER}/folders", json={"path": f"{folder}/x"}, headers=reader
    )
    assert made.status_code == 403
