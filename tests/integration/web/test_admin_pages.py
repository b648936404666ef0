"""The /admin and /usage pages: who may see them, what admin actions write to the audit trail."""

from __future__ import annotations

import csv
import io
from datetime import date

import httpx
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.models.audit import AuditEvent
from app.models.projects import Project
from app.models.usage import UsageDaily
from app.models.users import User, UserClusterAccount
from tests.integration.web.conftest import sign_in
from tests.world import World

TODAY = date(2026, 11, 20)


async def test_member_gets_403_on_admin_and_usage_pages(
    client: httpx.AsyncClient, people: World
) -> None:
    await sign_in(client, "carol")
    for path in ("/admin/", "/admin/users", "/admin/audit", "/usage"):
        response = await client.get(path)
        assert response.status_code == 403, path
        assert "Error 403" in response.text


async def test_anonymous_visitor_is_sent_to_sign_in(
    client: httpx.AsyncClient, people: World
) -> None:
    response = await client.get("/admin/users")
    assert response.status_code == 303
    assert response.headers["location"].startswith("/signin")


async def test_admin_actions_are_recorded_in_the_audit_trail_and_exported(
    client: httpx.AsyncClient, people: World, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    token = await sign_in(client, "admin")
    created = await client.post(
        "/admin/users", data={"login": "erin", "display_name": "Erin", "csrf_token": token}
    )
    assert created.status_code == 303
    user_url = created.headers["location"]
    user_id = int(user_url.rsplit("/", 1)[1])
    form = {"cluster": "testcluster", "username": "erin", "csrf_token": token}
    assert (await client.post(f"{user_url}/clusters", data=form)).status_code in (303, 422)
    project = await client.post(
        "/admin/projects",
        data={
            "name": "Biology",
            "cluster": "testcluster",
            "slurm_account": "biology",
            "csrf_token": token,
        },
    )
    project_url = project.headers["location"]
    member = {"user_id": str(user_id), "role": "manager", "csrf_token": token}
    assert (await client.post(f"{project_url}/members", data=member)).status_code == 303
    removed = await client.post(
        f"{project_url}/members/{user_id}/remove", data={"csrf_token": token}
    )
    assert removed.status_code == 303
    assert (await client.post(f"{user_url}/active", data={"csrf_token": token})).status_code == 303

    async with sessionmaker() as session:
        erin = await session.scalar(select(User).where(User.login == "erin"))
        assert erin is not None and not erin.is_active
        events = (await session.execute(select(AuditEvent).order_by(AuditEvent.id))).scalars()
        actions = [
            (e.action, e.surface, e.actor_user_id) for e in events if e.action.startswith("admin.")
        ]
    expected = [
        "admin.user.create",
        "admin.project.create",
        "admin.membership.set",
        "admin.membership.remove",
        "admin.user.deactivate",
    ]
    assert [a for a, _, _ in actions if a != "admin.user.cluster_username"] == expected
    assert {(s, actor) for _, s, actor in actions} == {("web", people.admin.id)}

    exported = await client.get(
        "/admin/audit", params={"action": "admin.project.create", "format": "csv"}
    )
    rows = list(csv.DictReader(io.StringIO(exported.text)))
    assert [(r["actor"], r["action"], r["surface"]) for r in rows] == [
        ("admin", "admin.project.create", "web")
    ]
    page = await client.get("/admin/audit", params={"login": "admin", "surface": "web"})
    assert "admin.membership.remove" in page.text


async def test_cluster_username_taken_by_another_user_is_refused(
    client: httpx.AsyncClient, people: World, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    token = await sign_in(client, "admin")
    form = {"cluster": "testcluster", "username": "alice", "csrf_token": token}
    response = await client.post(f"/admin/users/{people.carol.id}/clusters", data=form)
    assert response.status_code in (409, 422)
    async with sessionmaker() as session:
        names = await session.execute(
            select(UserClusterAccount.username).where(UserClusterAccount.user_id == people.carol.id)
        )
        assert list(names.scalars()) == ["carol"]


async def _usage(session: AsyncSession, project: Project, user: str, cpu_seconds: int) -> None:
    session.add(
        UsageDaily(
            cluster=project.cluster,
            account=project.slurm_account,
            user_name=user,
            partition="debug",
            day=TODAY,
            cpu_seconds=cpu_seconds,
            gpu_seconds=0,
            mem_mb_seconds=0,
            total_cpu_seconds=0.0,
            req_mem_mb_sum=0,
            max_rss_mb_sum=0,
            jobs_total=1,
            jobs_completed=1,
            jobs_failed=0,
            jobs_cancelled=0,
            jobs_timeout=0,
            jobs_other=0,
        )
    )


async def test_manager_sees_only_his_projects_usage_and_admin_sees_all(
    client: httpx.AsyncClient, people: World, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    async with sessionmaker() as session:
        await _usage(session, people.physics, "alice", 7200)
        await _usage(session, people.chemistry, "bob", 3600)
        await session.commit()
    params = {"start": TODAY.isoformat(), "end": TODAY.isoformat(), "format": "csv"}

    await sign_in(client, "alice")
    mine = list(csv.DictReader(io.StringIO((await client.get("/usage", params=params)).text)))
    await sign_in(client, "admin")
    everyone = list(csv.DictReader(io.StringIO((await client.get("/usage", params=params)).text)))

    assert [(r["group"], float(r["cpu_hours"])) for r in mine] == [("physics", 2.0)]
    assert sorted((r["group"], float(r["cpu_hours"])) for r in everyone) == [
        ("chemistry", 1.0),
        ("physics", 2.0),
    ]
    page = await client.get("/usage", params={**params, "format": "html", "sort": "group"})
    assert page.status_code == 200
    assert "<svg" in page.text and "<rect" in page.text


async def test_usage_page_for_manager_renders_chart_table_and_sort_links(
    client: httpx.AsyncClient, people: World, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    async with sessionmaker() as session:
        await _usage(session, people.chemistry, "bob", 3600)
        await session.commit()
    await sign_in(client, "bob")
    page = await client.get(
        "/usage",
        params={"start": "2026-11-01", "end": "2026-11-30", "period": "week", "group_by": "user"},
    )
    assert page.status_code == 200
    assert "sort=cpu_hours&order=asc" in page.text
    assert "<td>bob</td><td>1.00</td>" in page.text
    assert "<td>2026-11-16</td>" not in page.text
    assert ">11-16<" in page.text


async def test_nav_links_to_admin_and_usage_only_for_those_allowed(
    client: httpx.AsyncClient, people: World
) -> None:
    await sign_in(client, "carol")
    member_page = (await client.get("/templates")).text
    await sign_in(client, "bob")
    manager_page = (await client.get("/templates")).text
    await sign_in(client, "admin")
    admin_page = (await client.get("/templates")).text

    assert 'href="/admin/"' not in member_page and 'href="/usage"' not in member_page
    assert 'href="/admin/"' not in manager_page and 'href="/usage"' in manager_page
    assert 'href="/admin/"' in admin_page and 'href="/usage"' in admin_page
