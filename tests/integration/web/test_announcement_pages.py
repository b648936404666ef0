"""Announcements on the pages: posted by an administrator, on the dashboard and as a banner
on every page until dismissed; maintenance windows warned of before a script is submitted."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import httpx
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.models.announcements import Announcement
from app.models.audit import AuditEvent
from app.models.projects import Project
from tests.integration.web.conftest import sign_in
from tests.world import World

Maker = async_sessionmaker[AsyncSession]
BODY = "Scratch is read-only <b>tonight</b>; see https://status.example.org/scratch."
LINK = '<a href="https://status.example.org/scratch" rel="noopener noreferrer">'


async def _post(client: httpx.AsyncClient, csrf: str, body: str, dismissible: bool) -> None:
    data = {"csrf_token": csrf, "body": body, "shown_from": "", "shown_until": ""}
    if dismissible:
        data["is_dismissible"] = "true"
    answer = await client.post("/admin/announcements", data=data)
    assert answer.status_code == 303, answer.text


async def test_a_posted_announcement_is_escaped_linked_and_dismissed_per_user(
    client: httpx.AsyncClient, people: World
) -> None:
    await _post(client, await sign_in(client, "admin"), BODY, dismissible=True)
    csrf = await sign_in(client, "alice")
    dashboard = await client.get("/dashboard")
    assert 'id="announcements-heading">Announcements</h2>' in dashboard.text
    assert "&lt;b&gt;tonight&lt;/b&gt;" in dashboard.text and "<b>tonight" not in dashboard.text
    assert LINK + "https://status.example.org/scratch</a>." in dashboard.text
    jobs = await client.get("/jobs")
    assert 'class="announcement-banner"' in jobs.text and LINK in jobs.text
    [number] = {part.split("/")[0] for part in jobs.text.split('action="/announcements/')[1:]}
    dismissed = await client.post(
        f"/announcements/{number}/dismiss",
        data={"csrf_token": csrf},
        headers={"HX-Request": "true"},
    )
    assert (dismissed.status_code, dismissed.text) == (200, "")
    assert 'class="announcement-banner"' not in (await client.get("/jobs")).text
    # Still listed on the dashboard, without its button; others still see the banner.
    again = await client.get("/dashboard")
    assert LINK in again.text and f"/announcements/{number}/dismiss" not in again.text
    await sign_in(client, "bob")
    assert 'class="announcement-banner"' in (await client.get("/jobs")).text


async def test_a_lasting_announcement_cannot_be_dismissed(
    client: httpx.AsyncClient, people: World, sessionmaker: Maker
) -> None:
    async with sessionmaker() as session:
        row = Announcement(body="Read the rules.", is_dismissible=False)
        session.add(row)
        await session.commit()
    csrf = await sign_in(client, "alice")
    page = await client.get("/jobs")
    assert "Read the rules." in page.text and "/dismiss" not in page.text
    refused = await client.post(f"/announcements/{row.id}/dismiss", data={"csrf_token": csrf})
    assert refused.status_code == 422
    assert "This announcement cannot be dismissed." in refused.text


async def test_only_administrators_post_and_a_bad_window_is_said_next_to_its_field(
    client: httpx.AsyncClient, people: World
) -> None:
    await sign_in(client, "alice")
    assert (await client.get("/admin/announcements")).status_code == 403
    csrf = await sign_in(client, "admin")
    data = {
        "csrf_token": csrf,
        "body": "Upgrade.",
        "shown_from": "2026-12-02T08:00",
        "shown_until": "2026-12-01T08:00",
    }
    answer = await client.post("/admin/announcements", data=data)
    assert answer.status_code == 200
    assert 'id="shown_until-error">The end must come after the start.</p>' in answer.text


async def test_a_maintenance_window_is_announced_and_a_script_crossing_it_is_warned(
    client: httpx.AsyncClient, people: World, sessionmaker: Maker
) -> None:
    project: Project = people.physics
    start = datetime.now(UTC) + timedelta(hours=30, minutes=10)
    async with sessionmaker() as session:
        session.add(
            Announcement(
                source="maintenance",
                cluster=project.cluster,
                reservation_name="kernel",
                window_start=start,
                window_end=start + timedelta(hours=6),
                shown_until=start + timedelta(hours=6),
            )
        )
        await session.commit()
    csrf = await sign_in(client, "alice")
    page = await client.get("/jobs")
    assert f"{project.cluster} stops for maintenance from {start:%Y-%m-%d %H:%M} UTC" in page.text
    script = "#!/bin/bash\n#SBATCH --time=2-00:00:00\n#SBATCH --partition=long\nhostname\n"
    data = {"csrf_token": csrf, "project_id": str(project.id), "script": script, "args": ""}
    checked = await client.post("/submit/script/check", data=data)
    assert (
        f"This job asks for 2 days; {project.cluster} stops for maintenance in 30 hours, so it "
        "will wait until after it — ask for less than 30 hours to run now."
    ) in checked.text
    french = await client.post("/submit/script/check", data=data, headers={"Accept-Language": "fr"})
    assert "Ce travail demande 2 jours\u202f; " in french.text
    short = data | {"script": script.replace("2-00:00:00", "1:00:00")}
    assert "maintenance-warning" not in (await client.post("/submit/script/check", data=short)).text


async def test_the_colour_scheme_follows_the_browser_until_the_user_chooses(
    client: httpx.AsyncClient, people: World
) -> None:
    csrf = await sign_in(client, "alice")
    default = await client.get("/dashboard")
    assert "data-theme" not in default.text
    assert '<meta name="color-scheme" content="light dark">' in default.text
    saved = await client.post("/settings/appearance", data={"csrf_token": csrf, "theme": "dark"})
    assert 'data-theme="dark"' in saved.text and "Appearance saved." in saved.text
    later = await client.get("/jobs")
    assert '<html lang="en" data-theme="dark">' in later.text
    assert '<meta name="color-scheme" content="dark">' in later.text
    odd = await client.post("/settings/appearance", data={"csrf_token": csrf, "theme": "neon"})
    assert "data-theme" not in odd.text


async def test_an_administrator_withdraws_an_announcement_and_both_are_audited(
    client: httpx.AsyncClient, people: World, sessionmaker: Maker
) -> None:
    csrf = await sign_in(client, "admin")
    await _post(client, csrf, "Cake in room 3.", dismissible=False)
    listed = await client.get("/admin/announcements")
    assert "Cake in room 3." in listed.text
    async with sessionmaker() as session:
        row = await session.scalar(select(Announcement))
    assert row is not None and not row.is_dismissible and row.created_by_id == people.admin.id
    gone = await client.post(f"/admin/announcements/{row.id}/delete", data={"csrf_token": csrf})
    assert gone.status_code == 303
    assert "Cake in room 3." not in (await client.get("/admin/announcements")).text
    async with sessionmaker() as session:
        actions = list(await session.scalars(select(AuditEvent.action).order_by(AuditEvent.id)))
    assert actions[-2:] == ["announcement.post", "announcement.withdraw"]


async def test_dismissing_without_script_returns_to_the_page_it_came_from(
    client: httpx.AsyncClient, people: World, sessionmaker: Maker
) -> None:
    async with sessionmaker() as session:
        row = Announcement(body="Quiet week.")
        session.add(row)
        await session.commit()
    csrf = await sign_in(client, "alice")
    back = await client.post(
        f"/announcements/{row.id}/dismiss",
        data={"csrf_token": csrf},
        headers={"Referer": "http://portal.test/jobs?state=running"},
    )
    assert (back.status_code, back.headers["location"]) == (303, "/jobs?state=running")
    elsewhere = await client.post(
        f"/announcements/{row.id}/dismiss",
        data={"csrf_token": csrf},
        headers={"Referer": "http://evil.example//evil.example/x"},
    )
    assert elsewhere.headers["location"] == "/dashboard"
