from __future__ import annotations

import csv
import io
from datetime import date, timedelta

import httpx
import pytest
from sqlalchemy.ext.asyncio import AsyncSession

from app.models.base import utc_now
from app.models.usage import UsageDaily
from app.models.users import UserClusterAccount
from tests.factories import DEFAULT_CLUSTER, add_member, make_project, make_user
from tests.integration.api.conftest import issue_token
from tests.world import World

# The portability tier: these also run on SQLite (ADR 0018).
pytestmark = pytest.mark.sqlite

TODAY = utc_now().date()


async def _usage(session: AsyncSession, account: str, user: str, day: date, hours: int) -> None:
    session.add(
        UsageDaily(
            cluster=DEFAULT_CLUSTER,
            account=account,
            user_name=user,
            partition="debug",
            day=day,
            cpu_seconds=hours * 3600,
            jobs_total=1,
            jobs_completed=1,
        )
    )
    await session.flush()


async def _seed(session: AsyncSession) -> None:
    await _usage(session, "physics", "carol", TODAY, 2)
    await _usage(session, "physics", "alice", TODAY - timedelta(days=1), 3)
    await _usage(session, "chemistry", "bob", TODAY, 7)
    await session.commit()


async def test_manager_read_token_sees_only_managed_projects(
    client: httpx.AsyncClient, session: AsyncSession, world: World
) -> None:
    await _seed(session)
    headers = await issue_token(session, world.alice, ("read",))
    response = await client.get("/api/v1/usage", headers=headers)
    assert response.status_code == 200, response.text
    body = response.json()
    assert [(t["group"], t["cpu_hours"]) for t in body["totals"]] == [("physics", 5.0)]
    assert body["grand_total"]["jobs_total"] == 2
    assert len(body["periods"]) == 30
    assert body["end"] == TODAY.isoformat()


async def test_member_is_forbidden(
    client: httpx.AsyncClient, session: AsyncSession, world: World
) -> None:
    headers = await issue_token(session, world.carol, ("read",))
    response = await client.get("/api/v1/usage", headers=headers)
    assert response.status_code == 403
    assert response.json()["error"] == "Forbidden"


async def test_site_wide_view_needs_the_admin_scope(
    client: httpx.AsyncClient, session: AsyncSession, world: World
) -> None:
    await _seed(session)
    admin = await make_user(session, "ops", is_site_admin=True)
    read_only = await issue_token(session, admin, ("read",))
    with_admin = await issue_token(session, admin, ("admin",))
    assert (await client.get("/api/v1/usage", headers=read_only)).status_code == 403
    response = await client.get(
        "/api/v1/usage?group_by=user&sort=group&order=asc", headers=with_admin
    )
    assert response.status_code == 200, response.text
    assert [t["group"] for t in response.json()["totals"]] == ["alice", "bob", "carol"]


async def test_grouping_and_period_follow_the_query(
    client: httpx.AsyncClient, session: AsyncSession, world: World
) -> None:
    await _seed(session)
    headers = await issue_token(session, world.alice, ("read",))
    start = TODAY - timedelta(days=1)
    params = {"start": start.isoformat(), "end": TODAY.isoformat(), "group_by": "user"}
    body = (await client.get("/api/v1/usage", params=params, headers=headers)).json()
    cells = sorted((c["group"], c["period"], c["cpu_hours"]) for c in body["cells"])
    assert cells == [("alice", start.isoformat(), 3.0), ("carol", TODAY.isoformat(), 2.0)]
    assert body["periods"] == [start.isoformat(), TODAY.isoformat()]


async def test_csv_format_is_the_reports_export(
    client: httpx.AsyncClient, session: AsyncSession, world: World
) -> None:
    await _seed(session)
    headers = await issue_token(session, world.alice, ("read",))
    response = await client.get("/api/v1/usage?format=csv&period=month", headers=headers)
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/csv")
    rows = list(csv.DictReader(io.StringIO(response.text)))
    assert {row["group"] for row in rows} == {"physics"}
    assert sum(float(row["cpu_hours"]) for row in rows) == 5.0
    assert all(row["period"].endswith("-01") for row in rows)


async def test_invalid_parameters_are_422(
    client: httpx.AsyncClient, session: AsyncSession, world: World
) -> None:
    headers = await issue_token(session, world.alice, ("read",))
    for query in ("group_by=planet", "period=year", "format=xml", "start=yesterday"):
        response = await client.get(f"/api/v1/usage?{query}", headers=headers)
        assert response.status_code == 422, query
    backwards = {"start": TODAY.isoformat(), "end": (TODAY - timedelta(days=3)).isoformat()}
    response = await client.get("/api/v1/usage", params=backwards, headers=headers)
    assert response.status_code == 422
    assert "end" in response.json()["fields"]


async def test_usage_filters_and_groups_by_cluster_and_counts_a_person_once_by_login(
    client: httpx.AsyncClient, session: AsyncSession, world: World
) -> None:
    # alice is "asmith" on a second cluster, where physics is a project too.
    other = "cluster-b"
    session.add(UserClusterAccount(user_id=world.alice.id, cluster=other, username="asmith"))
    physics_b = await make_project(
        session, "physics (cluster-b)", slurm_account="physics", cluster=other
    )
    await add_member(session, world.alice, physics_b, role="manager")
    await _usage(session, "physics", "alice", TODAY, 2)
    session.add(
        UsageDaily(
            cluster=other,
            account="physics",
            user_name="asmith",
            partition="debug",
            day=TODAY,
            cpu_seconds=5 * 3600,
            jobs_total=1,
            jobs_completed=1,
        )
    )
    await session.commit()
    headers = await issue_token(session, world.alice, ("read",))

    async def totals(query: str) -> list[tuple[str, float]]:
        response = await client.get(f"/api/v1/usage?{query}", headers=headers)
        assert response.status_code == 200, response.text
        return [(t["group"], t["cpu_hours"]) for t in response.json()["totals"]]

    assert await totals("group_by=cluster") == [(other, 5.0), (DEFAULT_CLUSTER, 2.0)]
    assert await totals(f"group_by=project&cluster={other}") == [("physics (cluster-b)", 5.0)]
    assert await totals("group_by=user") == [("alice", 7.0)]
    assert await totals(f"group_by=user&cluster={DEFAULT_CLUSTER}") == [("alice", 2.0)]
