"""The Files pages on the development cluster, signed in as alice: browse, upload in pieces,
view, download, new folder, rename, delete after confirming, and the job page's links."""

from __future__ import annotations

import hashlib
import os
import uuid
from collections.abc import AsyncIterator
from urllib.parse import quote

import httpx
import pytest
from sqlalchemy.ext.asyncio import AsyncSession

from app.config import Settings
from tests.conftest import empty_all_tables
from tests.factories import make_job
from tests.integration.api.conftest import clusters_file, serving
from tests.integration.web.conftest import sign_in
from tests.world import World

pytestmark = pytest.mark.slurm
CLUSTER = "testcluster"


@pytest.fixture
async def db_url(postgresql_database_url: str) -> AsyncIterator[str]:
    # Files live on the cluster; one database backend is enough to prove the pages.
    yield postgresql_database_url
    await empty_all_tables(postgresql_database_url)


@pytest.fixture
async def browser(db_url: str, world: World) -> AsyncIterator[tuple[httpx.AsyncClient, str]]:
    settings = Settings(
        env="dev", database_url=db_url, clusters_file=clusters_file(), run_poller_in_web=False
    )
    async with serving(settings) as http:
        yield http, await sign_in(http, "alice")


@pytest.fixture
async def folder(browser: tuple[httpx.AsyncClient, str]) -> AsyncIterator[str]:
    http, csrf = browser
    name = f"portal-web-{uuid.uuid4().hex[:8]}"
    made = await http.post(
        f"/files/{CLUSTER}/mkdir", data={"path": "/home/alice", "name": name, "csrf_token": csrf}
    )
    assert made.status_code == 303, made.text
    yield f"/home/alice/{name}"
    for entry in ("data.txt", "renamed.txt", "big.bin"):
        await http.post(
            f"/files/{CLUSTER}/delete",
            data={"path": f"/home/alice/{name}/{entry}", "csrf_token": csrf},
        )
    await http.post(
        f"/files/{CLUSTER}/delete", data={"path": f"/home/alice/{name}", "csrf_token": csrf}
    )


async def put_file(http: httpx.AsyncClient, csrf: str, folder: str, name: str, data: bytes) -> None:
    upload = f"/files/{CLUSTER}/uploads/{uuid.uuid4().hex}"
    headers = {"X-CSRF-Token": csrf}
    sent = await http.put(
        upload, params={"folder": folder, "offset": 0}, content=data, headers=headers
    )
    assert sent.status_code == 200, sent.text
    form = {"folder": folder, "name": name, "size": str(len(data))}
    done = await http.post(f"{upload}/complete", data=form, headers=headers)
    assert done.status_code == 200, done.text


async def test_files_open_on_the_home_tab_with_breadcrumbs(
    browser: tuple[httpx.AsyncClient, str],
) -> None:
    http, _ = browser
    start = await http.get("/files", follow_redirects=True)
    assert start.status_code == 200
    assert 'aria-current="page">Home</a>' in start.text
    assert "Upload a file here" in start.text and "New folder" in start.text


async def test_upload_view_download_rename_and_delete(
    browser: tuple[httpx.AsyncClient, str], folder: str
) -> None:
    http, csrf = browser
    await put_file(http, csrf, folder, "data.txt", b"line one\nline <two>\n")
    listing = await http.get(f"/files/{CLUSTER}", params={"path": folder})
    assert "data.txt" in listing.text
    view = await http.get(f"/files/{CLUSTER}/view", params={"path": f"{folder}/data.txt"})
    assert "line &lt;two&gt;" in view.text
    download = await http.get(f"/files/{CLUSTER}/download", params={"path": f"{folder}/data.txt"})
    assert download.content == b"line one\nline <two>\n"
    assert download.headers["content-disposition"].startswith('attachment; filename="data.txt"')
    renamed = await http.post(
        f"/files/{CLUSTER}/rename",
        data={"path": f"{folder}/data.txt", "new_name": "renamed.txt", "csrf_token": csrf},
    )
    assert renamed.status_code == 303
    confirm = await http.get(f"/files/{CLUSTER}/delete", params={"path": f"{folder}/renamed.txt"})
    assert "Delete the file renamed.txt?" in confirm.text
    gone = await http.post(
        f"/files/{CLUSTER}/delete", data={"path": f"{folder}/renamed.txt", "csrf_token": csrf}
    )
    assert gone.status_code == 303
    after = await http.get(f"/files/{CLUSTER}", params={"path": folder})
    assert "This folder is empty." in after.text


async def test_a_large_file_is_offered_for_download_not_shown(
    browser: tuple[httpx.AsyncClient, str], folder: str
) -> None:
    http, csrf = browser
    data = os.urandom(2 * 1024 * 1024)
    await put_file(http, csrf, folder, "big.bin", data)
    view = await http.get(f"/files/{CLUSTER}/view", params={"path": f"{folder}/big.bin"})
    assert (
        "This file is 2.0 MiB; the portal shows files up to 1.0 MiB. Download it instead."
        in view.text
    )
    download = await http.get(f"/files/{CLUSTER}/download", params={"path": f"{folder}/big.bin"})
    assert hashlib.sha256(download.content).digest() == hashlib.sha256(data).digest()


async def test_changes_need_the_csrf_token_and_paths_stay_under_the_roots(
    browser: tuple[httpx.AsyncClient, str], folder: str
) -> None:
    http, _ = browser
    upload = f"/files/{CLUSTER}/uploads/{uuid.uuid4().hex}"
    refused = await http.put(upload, params={"folder": folder, "offset": 0}, content=b"x")
    assert refused.status_code == 403
    outside = await http.get(f"/files/{CLUSTER}", params={"path": "/etc"})
    assert outside.status_code == 403
    assert "/etc is outside the folders the portal may open." in outside.text


async def test_the_job_page_links_its_folder_and_log_file(
    browser: tuple[httpx.AsyncClient, str], folder: str, session: AsyncSession, world: World
) -> None:
    http, _ = browser
    job = await make_job(
        session, world.alice, world.physics, state="completed", slurm_job_id="4242", work_dir=folder
    )
    await session.commit()
    page = await http.get(f"/jobs/{job.id}")
    assert f'href="/files/{CLUSTER}?path={quote(folder, safe="")}"' in page.text
    log = quote(f"{folder}/slurm-4242.out", safe="")
    assert f'href="/files/{CLUSTER}/view?path={log}"' in page.text
