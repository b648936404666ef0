"""/api/v1/announcements, and /api/v1/jobs/check warning of a maintenance window."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import httpx
from sqlalchemy.ext.asyncio import AsyncSession

from app.models.announcements import Announcement
from app.models.clusters import ClusterStatus
from tests.integration.api.conftest import issue_token
from tests.world import World

URL = "/api/v1/announcements"


async def _add(session: AsyncSession, *rows: Announcement) -> None:
    session.add_all(rows)
    await session.commit()


async def test_announcements_are_paged_newest_first_and_dismissed_ones_can_be_left_out(
    client: httpx.AsyncClient, session: AsyncSession, world: World
) -> None:
    past = datetime.now(UTC) - timedelta(days=1)
    await _add(
        session,
        Announcement(body="first http://a.example/x"),
        Announcement(body="second"),
        Announcement(body="over", shown_until=past),
        Announcement(body="later", shown_from=datetime.now(UTC) + timedelta(days=1)),
    )
    reader = await issue_token(session, world.alice, ("read",))
    first = (await client.get(URL, params={"limit": 1}, headers=reader)).json()
    assert [a["text"] for a in first["items"]] == ["second"]
    assert first["items"][0]["source"] == "admin" and not first["items"][0]["is_dismissed"]
    rest = (await client.get(first["next"], headers=reader)).json()
    assert [a["text"] for a in rest["items"]] == ["first http://a.example/x"]
    submitter = await issue_token(session, world.alice)
    newest = first["items"][0]["id"]
    dismissed = await client.post(f"{URL}/{newest}/dismiss", headers=submitter)
    assert dismissed.status_code == 204
    assert (await client.post(f"{URL}/{newest}/dismiss", headers=reader)).status_code == 403
    kept = (await client.get(URL, params={"dismissed": "false"}, headers=reader)).json()
    assert [a["text"] for a in kept["items"]] == ["first http://a.example/x"]
    bad = await client.get(URL, params={"cursor": "nonsense"}, headers=reader)
    assert bad.status_code == 400
    assert (await client.post(f"{URL}/999999/dismiss", headers=submitter)).status_code == 404


async def test_checking_a_submission_warns_of_the_maintenance_window_it_would_cross(
    client: httpx.AsyncClient, session: AsyncSession, world: World
) -> None:
    start = datetime.now(UTC).replace(microsecond=0) + timedelta(hours=30, minutes=10)
    await _add(
        session,
        Announcement(
            source="maintenance",
            cluster=world.physics.cluster,
            reservation_name="kernel",
            window_start=start,
            window_end=start + timedelta(hours=6),
            shown_until=start + timedelta(hours=6),
        ),
    )
    headers = await issue_token(session, world.alice)
    body = {
        "script": "#!/bin/bash\nhostname\n",
        "project_id": world.physics.id,
        "time_limit_minutes": 2 * 24 * 60,
    }
    answer = await client.post("/api/v1/jobs/check", json=body, headers=headers)
    assert answer.status_code == 200, answer.text
    [warning] = answer.json()["warnings"]
    assert warning["code"] == "maintenance" and warning["fitting_minutes"] == 30 * 60 + 9
    assert warning["message"].startswith("This job asks for 2 days; ")
    assert datetime.fromisoformat(warning["window_start"]) == start
    french = await client.post(
        "/api/v1/jobs/check", json=body, headers=headers | {"Accept-Language": "fr"}
    )
    assert french.json()["warnings"][0]["message"].startswith("Ce travail demande 2 jours\u202f; ")
    short = await client.post(
        "/api/v1/jobs/check", json=body | {"time_limit_minutes": 60}, headers=headers
    )
    assert short.json() == {"warnings": []}
    listed = (await client.get(URL, headers=headers)).json()["items"]
    assert listed[0]["source"] == "maintenance" and listed[0]["text"].startswith(
        f"{world.physics.cluster} stops for maintenance from "
    )


async def test_only_an_administrators_admin_token_posts_and_withdraws(
    client: httpx.AsyncClient, session: AsyncSession, world: World
) -> None:
    body = {"text": "Scratch is read-only <b>tonight</b>.", "is_dismissible": False}
    alice = await issue_token(session, world.alice, ("read", "submit"))
    refused = await client.post(URL, json=body, headers=alice)
    assert refused.status_code == 403
    admin = await issue_token(session, world.admin, ("read", "submit", "admin"))
    created = await client.post(URL, json=body, headers=admin)
    assert created.status_code == 201, created.text
    posted = created.json()
    assert (posted["text"], posted["is_dismissible"]) == (body["text"], False)
    naive = await client.post(URL, json=body | {"shown_until": "2026-12-01T08:00"}, headers=admin)
    assert naive.status_code == 422
    backwards = body | {"shown_from": "2026-12-02T08:00Z", "shown_until": "2026-12-01T08:00Z"}
    assert (await client.post(URL, json=backwards, headers=admin)).status_code == 422
    listed = (await client.get(URL, headers=alice)).json()["items"]
    assert [a["id"] for a in listed] == [posted["id"]]
    assert (await client.delete(f"{URL}/{posted['id']}", headers=alice)).status_code == 403
    assert (await client.delete(f"{URL}/{posted['id']}", headers=admin)).status_code == 204
    assert (await client.get(URL, headers=alice)).json()["items"] == []


async def test_a_job_without_a_time_limit_is_checked_with_its_partitions_default(
    client: httpx.AsyncClient, session: AsyncSession, world: World
) -> None:
    start = datetime.now(UTC) + timedelta(hours=30, minutes=10)
    cluster = world.physics.cluster
    record = {"name": "long", "is_default": False, "default_minutes": 3 * 24 * 60}
    await _add(
        session,
        ClusterStatus(cluster=cluster, consecutive_failures=0, partitions=[record]),
        Announcement(
            source="maintenance",
            cluster=cluster,
            reservation_name="kernel",
            window_start=start,
            window_end=None,
        ),
    )
    headers = await issue_token(session, world.alice)
    body = {"script": "#!/bin/bash\nhostname\n", "project_id": world.physics.id}
    on_long = await client.post(
        "/api/v1/jobs/check", json=body | {"partition": "long"}, headers=headers
    )
    [warning] = on_long.json()["warnings"]
    assert warning["message"].startswith("This job asks for 3 days; ")
    assert warning["window_end"] is None
    elsewhere = await client.post("/api/v1/jobs/check", json=body, headers=headers)
    assert elsewhere.json() == {"warnings": []}
