"""The audit trail page: 20 events a page, newest first, paged both ways with its filters."""

from __future__ import annotations

import html
import re

import httpx
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.audit.service import PAGE_SIZE, record
from tests.integration.web.conftest import sign_in
from tests.world import World

EVENTS = 50
TARGET = re.compile(r"<td>thing (\d+)</td>")
NEXT = re.compile(r'<a href="([^"]+)" rel="next">')
PREVIOUS = re.compile(r'<a href="([^"]+)" rel="prev">')


async def _events(sessionmaker: async_sessionmaker[AsyncSession]) -> None:
    async with sessionmaker() as session:
        for number in range(1, EVENTS + 1):
            await record(session, None, "system", "test.event", "thing", number)
        # Noise the filter must keep off every page.
        await record(session, None, "system", "test.other", "thing", 0)
        await session.commit()


def _shown(page: httpx.Response) -> list[int]:
    return [int(number) for number in TARGET.findall(page.text)]


def _link(pattern: re.Pattern[str], page: httpx.Response) -> str | None:
    found = pattern.search(page.text)
    return html.unescape(found.group(1)) if found else None


async def test_audit_trail_pages_newest_first_and_keeps_its_filters(
    client: httpx.AsyncClient, people: World, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    await _events(sessionmaker)
    await sign_in(client, "admin")

    first = await client.get("/admin/audit", params={"action": "test.event"})
    second_url = _link(NEXT, first)
    assert second_url is not None and "action=test.event" in second_url
    second = await client.get(second_url)
    third_url = _link(NEXT, second)
    assert third_url is not None and "action=test.event" in third_url
    third = await client.get(third_url)
    back_url = _link(PREVIOUS, third)
    assert back_url is not None and "action=test.event" in back_url
    back = await client.get(back_url)

    assert PAGE_SIZE == 20
    assert _shown(first) == list(range(50, 30, -1))
    assert _shown(second) == list(range(30, 10, -1))
    assert _shown(third) == list(range(10, 0, -1))
    assert _link(PREVIOUS, first) is None and _link(NEXT, third) is None
    assert _shown(back) == _shown(second)
    assert _link(NEXT, back) is not None and _link(PREVIOUS, back) is not None


async def test_previous_from_the_second_page_shows_the_whole_first_page(
    client: httpx.AsyncClient, people: World, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    await _events(sessionmaker)
    await sign_in(client, "admin")

    first = await client.get("/admin/audit", params={"action": "test.event"})
    second = await client.get(_link(NEXT, first) or "")
    again = await client.get(_link(PREVIOUS, second) or "")

    assert _shown(again) == _shown(first)
    assert _link(PREVIOUS, again) is None


async def test_csv_export_has_every_matching_event_not_one_page(
    client: httpx.AsyncClient, people: World, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    await _events(sessionmaker)
    await sign_in(client, "admin")

    page = await client.get("/admin/audit", params={"action": "test.event"})
    csv_link = re.search(r'<a class="button" href="([^"]+)">CSV</a>', page.text)
    assert csv_link is not None
    exported = await client.get(html.unescape(csv_link.group(1)))

    assert exported.headers["content-type"].startswith("text/csv")
    assert len(exported.text.strip().splitlines()) == EVENTS + 1
