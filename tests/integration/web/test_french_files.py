"""The Files pages in French on the development cluster, as alice: a folder, a file, the
rename and delete pages and their refusals have no English message of the catalogue left."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from urllib.parse import quote

import httpx
import pytest

from app.config import Settings
from tests.conftest import empty_all_tables
from tests.i18n_check import english_left
from tests.integration.api.conftest import clusters_file, serving
from tests.integration.web.conftest import sign_in
from tests.integration.web.test_files_pages import CLUSTER, put_file
from tests.world import World

pytestmark = pytest.mark.slurm
FRENCH = {"Accept-Language": "fr-CA,fr;q=0.9"}


@pytest.fixture
async def db_url(postgresql_database_url: str) -> AsyncIterator[str]:
    yield postgresql_database_url
    await empty_all_tables(postgresql_database_url)


@pytest.fixture
async def browser(db_url: str, world: World) -> AsyncIterator[tuple[httpx.AsyncClient, str]]:
    settings = Settings(
        env="dev", database_url=db_url, clusters_file=clusters_file(), run_poller_in_web=False
    )
    async with serving(settings) as http:
        csrf = await sign_in(http, "alice")
        http.headers.update(FRENCH)
        yield http, csrf


@pytest.fixture
async def folder(browser: tuple[httpx.AsyncClient, str]) -> AsyncIterator[str]:
    http, csrf = browser
    name = f"portal-fr-{uuid.uuid4().hex[:8]}"
    made = await http.post(
        f"/files/{CLUSTER}/mkdir", data={"path": "/home/alice", "name": name, "csrf_token": csrf}
    )
    assert made.status_code == 303, made.text
    yield f"/home/alice/{name}"
    for entry in ("notes.txt", "data.bin", "empty", ".cache"):
        await http.post(
            f"/files/{CLUSTER}/delete",
            data={"path": f"/home/alice/{name}/{entry}", "csrf_token": csrf},
        )
    await http.post(
        f"/files/{CLUSTER}/delete", data={"path": f"/home/alice/{name}", "csrf_token": csrf}
    )


def assert_french(page: httpx.Response, status: int = 200, *, path: str = "") -> None:
    """No English of ours on ``page``; the folder's path, the user's own, is left out."""
    assert page.status_code == status, page.text
    assert '<html lang="fr">' in page.text
    ours = page.text.replace(path, "") if path else page.text
    assert english_left(ours) == [], page.request.url


async def test_a_folder_and_its_files_are_shown_in_french(
    browser: tuple[httpx.AsyncClient, str], folder: str
) -> None:
    http, csrf = browser
    await put_file(http, csrf, folder, "notes.txt", b"une ligne\n")
    await put_file(http, csrf, folder, "data.bin", b"\x00\x01" * 10)
    await put_file(http, csrf, folder, ".cache", b"x")
    made = await http.post(
        f"/files/{CLUSTER}/mkdir", data={"path": folder, "name": "empty", "csrf_token": csrf}
    )
    listing = await http.get(made.headers["location"])
    assert_french(listing, path=folder)
    assert "Téléverser un fichier ici" in listing.text and "dossiers en premier" in listing.text
    assert "Le dossier empty a été créé." in listing.text and "modifié à l'instant" in listing.text
    assert "Afficher 1 fichier caché" in listing.text
    shown = await http.get(f"/files/{CLUSTER}", params={"path": folder, "hidden": 1})
    assert_french(shown, path=folder)
    assert "Masquer les fichiers cachés" in shown.text
    assert_french(await http.get(f"/files/{CLUSTER}/view", params={"path": f"{folder}/notes.txt"}))
    binary = await http.get(f"/files/{CLUSTER}/view", params={"path": f"{folder}/data.bin"})
    assert_french(binary)
    assert "Ceci semble être un fichier binaire" in binary.text
    empty = await http.get(f"/files/{CLUSTER}", params={"path": f"{folder}/empty"})
    assert_french(empty, path=folder)
    assert "Ce dossier est vide." in empty.text


async def test_changes_and_their_refusals_are_in_french(
    browser: tuple[httpx.AsyncClient, str], folder: str
) -> None:
    http, csrf = browser
    await put_file(http, csrf, folder, "notes.txt", b"une ligne\n")
    await http.post(
        f"/files/{CLUSTER}/mkdir", data={"path": folder, "name": "empty", "csrf_token": csrf}
    )
    for action, entry in (("rename", "notes.txt"), ("delete", "notes.txt"), ("delete", "empty")):
        page = await http.get(f"/files/{CLUSTER}/{action}", params={"path": f"{folder}/{entry}"})
        assert_french(page)
    form = {"path": f"{folder}/notes.txt", "new_name": "empty", "csrf_token": csrf}
    refused = await http.post(f"/files/{CLUSTER}/rename", data=form)
    assert_french(refused, 409, path=folder)
    assert "existe déjà" in refused.text
    outside = await http.get(f"/files/{CLUSTER}", params={"path": "/etc"})
    assert_french(outside, 403)
    assert "/etc est hors des dossiers que le portail peut ouvrir." in outside.text
    home = await http.get(f"/files/{quote(CLUSTER)}")
    assert_french(home, path="/home/alice")
    assert 'aria-current="page"><span class="tab-name">Mon dossier personnel</span>' in home.text
