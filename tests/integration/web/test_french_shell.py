"""The shell and a researcher's own pages in French: the home and sign-in pages, error pages
and toasts, the dashboard with its disk usage panel, the usage page and the language page,
for a visitor, a member, a manager and a site administrator. Nothing of the catalogue may be
left in English."""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta

import httpx
import pytest
from fastapi import APIRouter, FastAPI
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.models.clusters import ClusterStatus
from app.models.usage import AccountingJob, AssociationLimit, UsageDaily
from app.scheduler.disk_usage import FilesystemUsage, QuotaFigures
from app.scheduler.fake import FakeScheduler
from app.scheduler.registry import SchedulerRegistry
from tests.factories import fake_registry, make_array, make_job, make_template
from tests.i18n_check import english_left, visible_text
from tests.integration.web.conftest import sign_in
from tests.world import World

FRENCH = {"Accept-Language": "fr-CA,fr;q=0.9,en;q=0.5"}
HTMX = {"HX-Request": "true"}
GiB = 1024**3
DAY = date(2026, 11, 20)
RANGE = {"start": DAY.isoformat(), "end": DAY.isoformat()}

crashing = APIRouter()


@crashing.get("/probe/crash-in-french")
async def crash_page() -> None:
    raise RuntimeError("internal detail")


def assert_french(response: httpx.Response, *, fragment: bool = False) -> str:
    """The page is in French and no English message or word of the interface is left."""
    html = response.text
    if not fragment:
        assert '<html lang="fr">' in html, response.url
    left = english_left(html)
    assert not left, f"{response.url} ({response.status_code}) still says in English: {left}"
    return html


@pytest.fixture
def scheduler() -> FakeScheduler:
    home = FilesystemUsage(
        "/home (user alice)",
        QuotaFigures(41 * GiB, hard=50 * GiB),
        QuotaFigures(12_034, hard=500_000),
        "/home ...",
    )
    scratch = FilesystemUsage(
        "/scratch (user alice)",
        QuotaFigures(11 * GiB, soft=10 * GiB, hard=12 * GiB, grace="6days", is_marked_over=True),
        QuotaFigures(5),
        "/scratch ...",
    )
    return FakeScheduler(disk_usages={"alice": [home, scratch]})


@pytest.fixture
def registry(scheduler: FakeScheduler) -> SchedulerRegistry:
    return fake_registry(scheduler)


@pytest.fixture
def french(client: httpx.AsyncClient) -> httpx.AsyncClient:
    client.headers.update(FRENCH)
    return client


def _cluster_statuses(now: datetime) -> list[ClusterStatus]:
    partition = {
        "name": "debug",
        "state": "up",
        "is_default": True,
        "max_minutes": 60,
        "default_minutes": None,
        "total_nodes": 4,
        "idle_nodes": 3,
        "total_cpus": 64,
        "idle_cpus": 40,
    }
    reachable = ClusterStatus(
        cluster="alpha",
        last_contact_at=now,
        consecutive_failures=0,
        partitions=[partition],
        partitions_at=now,
    )
    unreachable = ClusterStatus(
        cluster="beta",
        last_contact_at=now - timedelta(hours=1),
        consecutive_failures=4,
        last_error="ssh: connection refused",
    )
    return [reachable, unreachable]


async def _arrange_dashboard(sessionmaker: async_sessionmaker[AsyncSession], people: World) -> None:
    now = datetime.now(UTC)
    async with sessionmaker() as session:
        alice, physics = people.alice, people.physics
        template = await make_template(session, alice, name="Analyse")
        version = template.current_version_id
        shared = {"session": session, "owner": alice, "project": physics}
        await make_job(**shared, name="md-1", state="completed", template_version_id=version)
        await make_job(**shared, name="md-2", state="pending", expected_start_at=now)
        await make_job(**shared, name="md-3", state="running", submitted_outside=True)
        tasks = {1: "completed", 2: "running", 3: "pending", 4: "failed"}
        await make_array(
            **shared,
            task_states=tasks,
            name="sweep",
            state="running",
            slurm_job_id="77",
            array_spec="1-4",
        )
        session.add_all(_cluster_statuses(now))
        await session.commit()


def _wasteful_job(cluster: str) -> AccountingJob:
    """Four idle CPUs, eight times the memory asked for, a tenth of its time limit."""
    ended = datetime.combine(DAY, time(12), tzinfo=UTC)
    return AccountingJob(
        cluster=cluster,
        job_id="9001",
        user_name="alice",
        account="physics",
        partition="debug",
        state="completed",
        submit_time=ended - timedelta(hours=1),
        start_time=ended - timedelta(minutes=10),
        end_time=ended,
        elapsed_seconds=600,
        alloc_cpus=4,
        total_cpu_seconds=60.0,
        max_rss_mb=8220,
        req_mem_mb=1000,
        time_limit_seconds=36_000,
    )


async def _arrange_usage(sessionmaker: async_sessionmaker[AsyncSession], people: World) -> None:
    cluster = people.physics.cluster
    async with sessionmaker() as session:
        session.add(_wasteful_job(cluster))
        session.add(
            UsageDaily(
                cluster=cluster,
                account="physics",
                user_name="alice",
                partition="debug",
                day=DAY,
                cpu_seconds=2400,
                total_cpu_seconds=60.0,
                req_mem_mb_sum=1000,
                max_rss_mb_sum=8220,
                jobs_total=1,
                jobs_completed=1,
            )
        )
        session.add(AssociationLimit(cluster=cluster, account="physics", tres="cpu", minutes=600))
        await session.commit()


async def test_a_visitor_reads_the_home_sign_in_and_error_pages_in_french(
    french: httpx.AsyncClient, people: World
) -> None:
    home = assert_french(await french.get("/"))
    assert "Bienvenue" in home and "Se connecter" in home
    assert_french(await french.get("/signin"))
    refused = await french.post(
        "/signin", data={"login": "alice", "password": "wrong", "csrf_token": "forged"}
    )
    assert refused.status_code == 403
    assert "Ce formulaire a expiré" in assert_french(refused)
    missing = await french.get("/no/such/page")
    assert missing.status_code == 404
    assert "Page introuvable" in assert_french(missing)


async def test_a_wrong_password_and_then_too_many_are_said_in_french(
    french: httpx.AsyncClient, people: World
) -> None:
    form = await french.get("/signin")
    token = form.text.split('name="csrf_token" value="')[1].split('"')[0]
    attempt = {"login": "alice", "password": "wrong", "csrf_token": token}
    wrong = await french.post("/signin", data=attempt)
    assert "ne correspondent pas" in assert_french(wrong)
    for _ in range(5):
        blocked = await french.post("/signin", data=attempt)
    assert blocked.status_code == 429
    assert "Trop de tentatives" in assert_french(blocked)


async def test_a_managers_dashboard_and_disk_usage_are_in_french(
    french: httpx.AsyncClient, people: World, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    await _arrange_dashboard(sessionmaker, people)
    await sign_in(french, "alice")

    dashboard = assert_french(await french.get("/dashboard"))
    panel = assert_french(await french.get("/dashboard/disk-usage", headers=HTMX), fragment=True)

    assert "Tableau de bord" in dashboard and "3 libres sur 4" in dashboard
    assert "4 tâches\u00a0: 1 terminée(s)" in dashboard and "Injoignable" in dashboard
    assert "12\u202f034 sur 500\u202f000 (2 %)" in panel and "Quota dépassé" in panel
    assert "délai de grâce 6days" in panel


async def test_a_managers_usage_and_language_pages_are_in_french(
    french: httpx.AsyncClient, people: World, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    await _arrange_usage(sessionmaker, people)
    await sign_in(french, "alice")

    usage = assert_french(await french.get("/usage", params=RANGE))
    weekly = assert_french(
        await french.get("/usage", params={**RANGE, "period": "week", "group_by": "user"})
    )
    assert_french(await french.get("/settings/language"))

    assert "Heures-CPU par jour, par projet" in usage and "Travaux qui gaspillent" in usage
    assert "plus de\u00a0100\u00a0%" in usage and "tout le projet" in usage
    assert "par semaine, par utilisateur" in weekly


async def test_a_members_empty_dashboard_and_refusals_are_in_french(
    french: httpx.AsyncClient, people: World
) -> None:
    await sign_in(french, "carol")

    dashboard = assert_french(await french.get("/dashboard"))
    refused = await french.get("/usage")
    bad_date = await french.get("/usage", params={"start": "2026-13-01"})
    no_job = await french.get("/jobs/abc")
    toast = await french.get("/jobs/abc/resubmit", headers=HTMX)

    assert "Rien en file d'attente ni en cours." in dashboard
    assert refused.status_code == 403 and "Accès refusé" in assert_french(refused)
    assert bad_date.status_code == 422
    assert "le mois n'est pas entre 1 et 12" in visible_text(bad_date.text)
    assert_french(bad_date)
    assert "Aucun travail abc." in assert_french(no_job)
    assert "Aucun travail abc." in assert_french(toast, fragment=True)


async def test_an_administrators_pages_and_a_crash_are_in_french(
    app: FastAPI, french: httpx.AsyncClient, people: World
) -> None:
    app.include_router(crashing)
    crash = await french.get("/probe/crash-in-french")
    assert crash.status_code == 500
    assert "Un problème est survenu de notre côté." in assert_french(crash)
    await sign_in(french, "admin")

    assert_french(await french.get("/dashboard"))
    assert_french(await french.get("/usage"))
    crash = await french.get("/probe/crash-in-french")
    assert "Un problème est survenu de notre côté." in assert_french(crash)
