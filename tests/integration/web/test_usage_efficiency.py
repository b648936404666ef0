"""The usage page's efficiency tables: over-request figures in words, waste in a warning
colour, and wasteful jobs linked to their pages when the portal has them."""

from __future__ import annotations

import html
import re
from datetime import UTC, date, datetime, time, timedelta

import httpx
import pytest
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.models.usage import AccountingJob, UsageDaily
from app.web.usage_views import MEMORY_OVER, share
from tests.factories import make_job
from tests.integration.web.conftest import sign_in
from tests.world import World

DAY = date(2026, 11, 20)
RANGE = {"start": DAY.isoformat(), "end": DAY.isoformat()}


def _accounting(cluster: str, slurm_id: str, **fields: object) -> AccountingJob:
    ended = datetime.combine(DAY, time(12), tzinfo=UTC)
    values: dict[str, object] = {
        "cluster": cluster,
        "job_id": slurm_id,
        "user_name": "alice",
        "account": "physics",
        "partition": "debug",
        "state": "completed",
        "submit_time": ended - timedelta(hours=1),
        "start_time": ended - timedelta(minutes=10),
        "end_time": ended,
        "elapsed_seconds": 600,
        "alloc_cpus": 1,
        "total_cpu_seconds": 590.0,
        "max_rss_mb": 8220,
        "req_mem_mb": 1000,
        "time_limit_seconds": 36_000,
        **fields,
    }
    return AccountingJob(**values)


def _daily(cluster: str) -> UsageDaily:
    return UsageDaily(
        cluster=cluster,
        account="physics",
        user_name="alice",
        partition="debug",
        day=DAY,
        cpu_seconds=600,
        total_cpu_seconds=590.0,
        req_mem_mb_sum=1000,
        max_rss_mb_sum=8220,
        jobs_total=1,
        jobs_completed=1,
    )


async def _arrange(sessionmaker: async_sessionmaker[AsyncSession], people: World) -> int:
    """Two wasteful jobs of alice's, one of them submitted through the portal."""
    cluster = people.physics.cluster
    async with sessionmaker() as session:
        session.add_all(
            [_accounting(cluster, "9001"), _accounting(cluster, "9002"), _daily(cluster)]
        )
        job = await make_job(session, people.alice, people.physics, slurm_job_id="9001")
        await session.commit()
    return job.id


@pytest.mark.parametrize(
    ("ratio", "text", "over"),
    [
        (None, "—", None),
        (0.5, "50\u00a0%", None),
        (1.004, "100\u00a0%", None),
        (8.22, "over\u00a0100\u00a0%", "used 8.2 times the memory asked for"),
    ],
)
def test_a_share_above_the_request_is_said_in_words(
    ratio: float | None, text: str, over: str | None
) -> None:
    shown = share(ratio, MEMORY_OVER)

    assert (shown.text, shown.over) == (text, over)


async def test_memory_over_the_request_is_worded_not_822_percent(
    client: httpx.AsyncClient, people: World, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    await _arrange(sessionmaker, people)
    await sign_in(client, "alice")

    page = (await client.get("/usage", params=RANGE)).text

    assert "822 %" not in page
    over = (
        '<span class="over-request">over\u00a0100\u00a0%: <span class="over-words">'
        "used 8.2 times the memory asked for</span></span>"
    )
    # By project, by user, and on each of the two wasteful jobs.
    assert page.count(over) == 4


async def test_wasteful_jobs_have_warning_badges_and_link_to_portal_jobs(
    client: httpx.AsyncClient, people: World, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    portal_id = await _arrange(sessionmaker, people)
    await sign_in(client, "alice")

    page = (await client.get("/usage", params=RANGE)).text
    wasteful = page[page.index('id="wasteful"') :]

    assert f'<td><a href="/jobs/{portal_id}">9001</a></td>' in wasteful
    assert "<td>9002</td>" in wasteful
    badges = re.findall(r'<span class="badge([^"]*)">', wasteful)
    assert badges and set(badges) == {" badge-warning"}
    assert "time limit 10 times its run time or more" in wasteful


async def test_a_job_of_a_project_the_reader_cannot_see_is_not_linked(
    client: httpx.AsyncClient, people: World, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    cluster = people.physics.cluster
    async with sessionmaker() as session:
        session.add(_accounting(cluster, "9003"))
        # The same Slurm id on a chemistry job: not one alice may open.
        await make_job(session, people.bob, people.chemistry, slurm_job_id="9003")
        await session.commit()
    await sign_in(client, "alice")

    page = (await client.get("/usage", params=RANGE)).text

    assert "<td>9003</td>" in page
    assert ">9003</a>" not in page


async def test_job_page_words_memory_used_over_the_request(
    client: httpx.AsyncClient, people: World, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    async with sessionmaker() as session:
        job = await make_job(
            session,
            people.alice,
            people.physics,
            state="completed",
            memory_mb=1000,
            max_rss_bytes=8220 * 2**20,
        )
        await session.commit()
    await sign_in(client, "alice")

    page = (await client.get(f"/jobs/{job.id}")).text

    assert "822.0 %" not in page
    assert "used 8.2 times the memory asked for" in page


async def test_wasteful_jobs_show_ten_a_page_newest_first_with_links_between_pages(
    client: httpx.AsyncClient, people: World, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    cluster = people.physics.cluster
    ended = datetime.combine(DAY, time(12), tzinfo=UTC)
    async with sessionmaker() as session:
        session.add_all(
            _accounting(cluster, str(9100 + n), end_time=ended + timedelta(minutes=n))
            for n in range(23)
        )
        await session.commit()
    await sign_in(client, "alice")

    pages, url = [], "/usage?" + "&".join(f"{key}={value}" for key, value in RANGE.items())
    while url:
        page = (await client.get(url)).text
        wasteful = page[
            page.index('id="waste-heading"') : page.index("</section>", page.index('id="wasteful"'))
        ]
        pages.append((re.findall(r"<td>(91\d\d)</td>", wasteful), wasteful))
        older = re.search(r'<a href="([^"]+)" rel="next">Older wasteful jobs</a>', wasteful)
        url = html.unescape(older[1]) if older else ""

    assert [ids for ids, _ in pages] == [
        [str(9100 + n) for n in range(22, 12, -1)],
        [str(9100 + n) for n in range(12, 2, -1)],
        [str(9100 + n) for n in range(2, -1, -1)],
    ]
    assert "1 to 10 of 23 wasteful jobs, newest first." in pages[0][1]
    assert "21 to 23 of 23 wasteful jobs, newest first." in pages[2][1]
    assert "Newer wasteful jobs" not in pages[0][1] and "Newer wasteful jobs" in pages[2][1]
