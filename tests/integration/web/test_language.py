"""The interface language: the browser's unless the user chose one, kept across sign-ins."""

from __future__ import annotations

import httpx
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.models.users import User
from tests.integration.web.conftest import sign_in
from tests.world import World

FRENCH = {"Accept-Language": "fr-CA,fr;q=0.9,en;q=0.5"}


async def test_a_signed_out_page_speaks_the_browsers_language(
    client: httpx.AsyncClient, people: World
) -> None:
    french = await client.get("/signin", headers=FRENCH)
    assert '<html lang="fr">' in french.text
    english = await client.get("/signin", headers={"Accept-Language": "de,en;q=0.5"})
    assert '<html lang="en">' in english.text


async def test_the_users_choice_outranks_the_browser_and_is_saved(
    client: httpx.AsyncClient, people: World, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    csrf = await sign_in(client, "alice")
    english = await client.get("/settings/language")
    assert '<html lang="en">' in english.text and "Language saved." not in english.text
    saved = await client.post("/settings/language", data={"csrf_token": csrf, "locale": "fr"})
    assert saved.status_code == 200
    assert '<html lang="fr">' in saved.text and "Langue enregistrée." in saved.text
    async with sessionmaker() as session:
        assert (await session.get(User, people.alice.id)).locale == "fr"  # type: ignore[union-attr]
    later = await client.get("/settings/language", headers={"Accept-Language": "en"})
    assert '<html lang="fr">' in later.text
    back = await client.post("/settings/language", data={"csrf_token": csrf, "locale": ""})
    assert '<html lang="en">' in back.text


async def test_an_unknown_language_is_not_saved(
    client: httpx.AsyncClient, people: World, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    csrf = await sign_in(client, "alice")
    answer = await client.post(
        "/settings/language", data={"csrf_token": csrf, "locale": "<script>"}
    )
    assert answer.status_code == 200
    async with sessionmaker() as session:
        assert (await session.get(User, people.alice.id)).locale is None  # type: ignore[union-attr]


async def test_the_form_needs_the_csrf_token(client: httpx.AsyncClient, people: World) -> None:
    await sign_in(client, "alice")
    answer = await client.post("/settings/language", data={"locale": "fr"})
    assert answer.status_code == 403
