"""The Files pages on the development cluster, signed in as alice: browse, upload in pieces,
view, download, new folder, rename, delete after confirming, and the job page's links."""

from __future__ import annotations

import hashlib
import html
import os
import re
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
    for entry in ("data.txt", "renamed.txt", "big.bin", ".hidden-one", ".hidden-two", "empty"):
        await http.post(
            f"/files/{CLUSTER}/delete",
            data={"path": f"/home/alice/{name}/{entry}", "csrf_token": csrf},
        )
    await http.post(
        f"/files/{CLUSTER}/delete", data={"path": f"/home/alice/{name}", "csrf_token": csrf}
    )


async def put_file(
    http: httpx.AsyncClient, csrf: str, folder: str, name: str, data: bytes
) -> dict[str, str]:
    upload = f"/files/{CLUSTER}/uploads/{uuid.uuid4().hex}"
    headers = {"X-CSRF-Token": csrf}
    sent = await http.put(
        upload, params={"folder": folder, "offset": 0}, content=data, headers=headers
    )
    assert sent.status_code == 200, sent.text
    form = {"folder": folder, "name": name, "size": str(len(data))}
    done = await http.post(f"{upload}/complete", data=form, headers=headers)
    assert done.status_code == 200, done.text
    answer: dict[str, str] = done.json()
    return answer


async def test_files_open_on_the_home_tab_with_breadcrumbs(
    browser: tuple[httpx.AsyncClient, str],
) -> None:
    http, _ = browser
    start = await http.get("/files", follow_redirects=True)
    assert start.status_code == 200
    # One tab per root, each named by its path; the home alone also says whose it is.
    assert (
        'aria-current="page"><span class="tab-name">My home folder</span> '
        '<span class="tab-path" translate="no">/home/alice</span></a>'
    ) in start.text
    assert '<span class="tab-path" translate="no">/home</span>' in start.text
    # The forms that change the folder come before its list.
    upload, table = start.text.index("Upload a file here"), start.text.index('id="files-table"')
    assert upload < start.text.index("New folder") < table


async def _said(http: httpx.AsyncClient, response: httpx.Response) -> tuple[str, str | None]:
    """Where a change sent the browser: its message and the entry it marks."""
    assert response.status_code == 303, response.text
    shown = await http.get(response.headers["location"])
    message = re.search(
        r'<p class="form-ok" role="status" id="files-message">([^<]*)</p>', shown.text
    )
    marked = re.search(
        r'<tr class="is-marked" id="marked-entry">\s*<th scope="row"><a [^>]*>([^<]*)</a>',
        shown.text,
    )
    assert message is not None, shown.text
    return message[1], marked[1] if marked else None


async def test_each_change_is_said_and_its_entry_marked(
    browser: tuple[httpx.AsyncClient, str], folder: str
) -> None:
    http, csrf = browser
    made = await http.post(
        f"/files/{CLUSTER}/mkdir", data={"path": folder, "name": "empty", "csrf_token": csrf}
    )
    assert await _said(http, made) == ("Created the folder empty.", "empty/")
    done = await put_file(http, csrf, folder, "data.txt", b"x")
    # The upload script goes back to the folder the answer names.
    uploaded = await http.get(done["folder_href"])
    assert "Uploaded data.txt." in uploaded.text and 'id="marked-entry"' in uploaded.text
    renamed = await http.post(
        f"/files/{CLUSTER}/rename",
        data={"path": f"{folder}/data.txt", "new_name": "renamed.txt", "csrf_token": csrf},
    )
    assert await _said(http, renamed) == ("Renamed to renamed.txt.", "renamed.txt")
    for name in ("renamed.txt", "empty"):
        gone = await http.post(
            f"/files/{CLUSTER}/delete", data={"path": f"{folder}/{name}", "csrf_token": csrf}
        )
        assert await _said(http, gone) == (f"Deleted {name}.", None)


async def test_dotfiles_wait_behind_a_toggle_that_counts_them(
    browser: tuple[httpx.AsyncClient, str], folder: str
) -> None:
    http, csrf = browser
    for name in (".hidden-one", ".hidden-two", "data.txt"):
        await put_file(http, csrf, folder, name, b"x")
    listing = await http.get(f"/files/{CLUSTER}", params={"path": folder})
    assert "data.txt" in listing.text and ".hidden-one" not in listing.text
    assert "Entries 1 to 1 of 1, folders first." in listing.text
    toggle = re.search(r'<a href="([^"]+)" id="hidden-toggle">([^<]+)</a>', listing.text)
    assert toggle is not None and toggle[2] == "Show 2 hidden files"
    shown = await http.get(html.unescape(toggle[1]))
    assert ".hidden-one" in shown.text and ".hidden-two" in shown.text
    assert "Entries 1 to 3 of 3, folders first." in shown.text
    assert ">Hide hidden files</a>" in shown.text


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
