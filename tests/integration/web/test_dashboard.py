"""The dashboard: my active and recent jobs, quick submit links and cluster health."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import httpx
import pytest
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.models.clusters import ClusterStatus
from tests.factories import make_app_session, make_job, make_template
from tests.integration.web.conftest import sign_in
from tests.world import World

# The portability tier: these also run on SQLite (ADR 0018).
pytestmark = pytest.mark.sqlite


async def test_dashboard_lists_my_active_and_recent_jobs_only(
    client: httpx.AsyncClient, people: World, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    async with sessionmaker() as session:
        await make_job(session, people.alice, people.physics, name="mine-running", state="running")
        await make_job(session, people.alice, people.physics, name="mine-done", state="completed")
        await make_job(session, people.carol, people.physics, name="carols", state="running")
        await session.commit()
    await sign_in(client, "alice")

    page = await client.get("/dashboard")

    active, recent = page.text.split('id="recent-heading"')
    assert "mine-running" in active and "mine-done" not in active
    assert "mine-done" in recent and "mine-running" not in recent
    assert "carols" not in page.text
    assert 'hx-trigger="every 3s"' in page.text


async def test_dashboard_jobs_fragment_stops_polling_when_nothing_is_active(
    client: httpx.AsyncClient, people: World, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    async with sessionmaker() as session:
        await make_job(session, people.alice, people.physics, state="completed")
        await session.commit()
    await sign_in(client, "alice")

    fragment = await client.get("/dashboard?fragment=jobs", headers={"HX-Request": "true"})

    assert 'id="dashboard-jobs"' in fragment.text and "<html" not in fragment.text
    assert "hx-trigger" not in fragment.text


async def test_dashboard_links_recently_and_often_used_templates_to_their_submit_form(
    client: httpx.AsyncClient, people: World, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    async with sessionmaker() as session:
        often = await make_template(session, people.alice, name="Often used")
        once = await make_template(session, people.alice, name="Used once")
        for _ in range(3):
            await make_job(
                session,
                people.alice,
                people.physics,
                template_version_id=often.current_version_id,
                state="completed",
            )
        await make_job(
            session,
            people.alice,
            people.physics,
            template_version_id=once.current_version_id,
            state="completed",
        )
        await session.commit()
    await sign_in(client, "alice")

    page = await client.get("/dashboard")

    recent, frequent = page.text.split("Most used")
    assert recent.index("Used once") < recent.index("Often used")
    assert f'href="/templates/{often.id}/submit">Often used</a> <span class="subtle">(3 jobs)' in (
        frequent
    )


async def test_dashboard_shows_cluster_health_from_the_database(
    client: httpx.AsyncClient, people: World, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    now = datetime.now(UTC)
    async with sessionmaker() as session:
        session.add(ClusterStatus(cluster="alpha", last_contact_at=now, consecutive_failures=0))
        session.add(
            ClusterStatus(
                cluster="beta",
                last_contact_at=now - timedelta(hours=1),
                consecutive_failures=4,
                last_error="ssh: connection refused",
            )
        )
        await session.commit()
    await sign_in(client, "alice")

    page = await client.get("/dashboard")

    alpha, beta = page.text.split("<strong>beta</strong>")
    assert "Reachable" in alpha.split("<strong>alpha</strong>")[1]
    assert "Unreachable" in beta and "ssh: connection refused" in beta
    assert "not reported yet" in page.text


async def test_dashboard_sends_visitors_who_are_not_signed_in_to_sign_in(
    client: httpx.AsyncClient,
) -> None:
    response = await client.get("/dashboard")

    assert response.status_code == 303
    assert response.headers["location"].startswith("/signin")


async def test_dashboard_shows_the_partitions_the_poller_reported(
    client: httpx.AsyncClient, people: World, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    now = datetime.now(UTC)
    debug = {
        "name": "debug",
        "state": "up",
        "is_default": True,
        "max_minutes": 60,
        "default_minutes": 10,
        "total_nodes": 4,
        "idle_nodes": 3,
        "total_cpus": 64,
        "idle_cpus": 40,
    }
    async with sessionmaker() as session:
        session.add(
            ClusterStatus(
                cluster="alpha",
                last_contact_at=now,
                consecutive_failures=0,
                partitions=[debug],
                partitions_at=now,
            )
        )
        await session.commit()
    await sign_in(client, "alice")

    page = await client.get("/dashboard")

    row = page.text.split('<th scope="row">debug')[1].split("</tr>")[0]
    # Slurm's "up" in words.
    assert "(default)" in row and "<td>available</td>" in row
    assert "<td>1:00:00</td><td>0:10:00</td>" in row
    assert "<td>3 of 4 idle</td><td>40 of 64 idle</td>" in row
    assert "not reported yet" not in page.text


async def test_dashboard_says_when_an_idle_session_will_be_ended(
    client: httpx.AsyncClient, people: World, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    now = datetime.now(UTC)
    ends = now + timedelta(minutes=15)
    async with sessionmaker() as session:
        await make_app_session(
            session, people.alice, people.physics, port=5, secret="x" * 20, ready_at=now,
            idle_since=now - timedelta(minutes=45), idle_warned_at=now, idle_ends_at=ends,
        )  # fmt: skip
        await session.commit()
    await sign_in(client, "alice")

    page = (await client.get("/dashboard")).text

    assert "idle: ends at <time" in page and f"{ends:%Y-%m-%d %H:%M} UTC</time>" in page
