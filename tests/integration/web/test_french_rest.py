"""Interactive apps, notifications, API tokens and the admin pages in French: each page, as
the people who see it, has no English message of the catalogue left in its visible text."""

from __future__ import annotations

import re
from typing import Any

import httpx
import pytest
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.admin.associations import SlurmAssociation, SlurmState
from app.audit.service import record
from app.config import Settings
from app.db import unit_of_work
from app.job_templates import choices
from app.jobs import repository
from app.models.base import utc_now
from app.models.notifications import DeliveryAttempt, Notification
from app.notifications import wording
from app.scheduler.fake import FakeScheduler
from app.scheduler.registry import SchedulerRegistry
from app.web import admin_audit
from tests.factories import fake_registry, make_app_session, make_job
from tests.i18n_check import english_left
from tests.integration.notifications.conftest import add_rule
from tests.integration.web.conftest import csrf_from, sign_in
from tests.world import World

FRENCH = {"Accept-Language": "fr-CA,fr;q=0.9"}
ANSWER = "550 No such user"
REVOKE = re.compile(r"/settings/tokens/\d+/revoke")


@pytest.fixture
def settings(db_url: str) -> Settings:
    return Settings(env="dev", database_url=db_url, run_poller_in_web=False, smtp_host="mail")


@pytest.fixture
def registry() -> SchedulerRegistry:
    choices._cache.clear()
    return fake_registry(FakeScheduler(accounts={"alice": ["physics"], "carol": ["physics"]}))


@pytest.fixture
async def french(client: httpx.AsyncClient) -> httpx.AsyncClient:
    client.headers.update(FRENCH)
    return client


def assert_french(page: httpx.Response, status: int = 200, *, theirs: str = "") -> None:
    """No English of ours on ``page``; ``theirs`` is someone else's words shown on it."""
    assert page.status_code == status, page.text
    assert '<html lang="fr">' in page.text
    ours = page.text.replace(theirs, "") if theirs else page.text
    assert english_left(ours) == [], page.request.url


async def test_the_apps_pages_and_a_refused_launch_are_in_french(
    french: httpx.AsyncClient, world: World, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    async with unit_of_work(sessionmaker) as session:
        await make_app_session(session, world.alice, world.physics, state="pending")
        await make_app_session(session, world.alice, world.physics, state="completed")
    csrf = await sign_in(french, "alice")
    listing = await french.get("/apps")
    assert_french(listing)
    assert "En attente d'un nœud" in listing.text and "Terminée" in listing.text
    assert "Des carnets, un terminal" in listing.text
    assert_french(await french.get("/apps/jupyterlab"))
    form = {"csrf_token": csrf, "project_id": str(world.physics.id), "cores": "999"}
    refused = await french.post("/apps/jupyterlab", data=form | {"memory_gb": "x"})
    assert_french(refused, 422)
    assert "entrez un nombre entier" in refused.text


async def _logged_attempts(
    sessionmaker: async_sessionmaker[AsyncSession], world: World, job_id: int
) -> None:
    """Failed deliveries as the dispatcher stores them: in English."""
    rule = await add_rule(sessionmaker, world.alice, "ended")
    errors = [
        wording.english(wording.NO_MAIL_SERVER),
        wording.english(wording.MAIL_REFUSED, answer=ANSWER),
        wording.english(wording.NOT_PUBLIC, host="10.0.0.1"),
    ]
    async with unit_of_work(sessionmaker) as session:
        sent = Notification(
            rule_id=rule.id,
            user_id=world.alice.id,
            job_id=job_id,
            event="failed",
            job_state="out_of_memory",
        )
        session.add(sent)
        await session.flush()
        for attempt, error in enumerate(errors, start=1):
            session.add(
                DeliveryAttempt(
                    notification_id=sent.id,
                    user_id=world.alice.id,
                    attempt=attempt,
                    at=utc_now(),
                    channel="email",
                    is_success=False,
                    error=error,
                )
            )


async def test_the_notifications_pages_and_the_delivery_log_are_in_french(
    french: httpx.AsyncClient, world: World, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    async with unit_of_work(sessionmaker) as session:
        job = await make_job(session, world.alice, world.physics, state="running", name="sim")
    await _logged_attempts(sessionmaker, world, job.id)
    csrf = await sign_in(french, "alice")
    page = await french.get("/settings/notifications")
    # The mail server's own answer is quoted as it said it.
    assert_french(page, theirs=ANSWER)
    assert "Le serveur de courriel a refusé\u00a0: 550 No such user" in page.text
    assert "10.0.0.1 est une adresse privée" in page.text
    form = {"csrf_token": csrf, "event": "failed", "scope": "all", "channel": "webhook"}
    added = await french.post(
        "/settings/notifications", data=form | {"webhook_url": "https://93.184.216.34/hook"}
    )
    assert_french(added, 201, theirs=ANSWER)
    assert "Vous serez averti par webhook quand l'un de vos travaux échoue." in added.text
    refused = await french.post(
        "/settings/notifications", data=form | {"webhook_url": "http://127.0.0.1:8000/"}
    )
    assert_french(refused, 422, theirs=ANSWER)
    assert "127.0.0.1 est une adresse privée" in refused.text
    assert_french(await french.get(f"/jobs/{job.id}/notify"))


async def test_the_browser_notifications_feed_speaks_french(
    french: httpx.AsyncClient, world: World, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    async with unit_of_work(sessionmaker) as session:
        job = await make_job(session, world.alice, world.physics, state="running", name="sim")
    await sign_in(french, "alice")
    start = (await french.get("/notifications/feed")).json()
    async with unit_of_work(sessionmaker) as session:
        repository.add_event(session, job.id, "running", "completed", reason=None, source="poller")
    feed = (await french.get(f"/notifications/feed?after={start['cursor']}")).json()
    assert feed["notices"] == [
        {"title": "Travail sim\u00a0: terminé", "body": "Le travail sim est maintenant terminé."}
    ]


async def test_the_tokens_pages_are_in_french(french: httpx.AsyncClient, world: World) -> None:
    csrf = await sign_in(french, "alice")
    assert_french(await french.get("/settings/tokens"))
    form = {"csrf_token": csrf, "name": "laptop", "scopes": "read", "expires_in_days": "30"}
    created = await french.post("/settings/tokens", data=form)
    assert_french(created, 201)
    assert "Votre nouveau jeton « laptop »" in created.text
    refused = await french.post("/settings/tokens", data=form | {"name": "", "scopes": []})
    assert_french(refused, 422)
    listing = await french.get("/settings/tokens")
    revoke = REVOKE.search(listing.text)
    assert revoke is not None
    confirm = await french.get(revoke[0])
    assert_french(confirm)
    await french.post(revoke[0], data={"csrf_token": csrf_from(confirm.text)})
    revoked = await french.get("/settings/tokens")
    assert_french(revoked)
    assert "révoqué" in revoked.text


async def _slurm_state(*_args: Any) -> SlurmState:
    associations = [
        SlurmAssociation("physics", "alice"),
        SlurmAssociation("physics", "zoe"),
        SlurmAssociation("biology", "alice"),
    ]
    return SlurmState(associations, {"biology": {"alice"}})


async def test_the_admin_pages_are_in_french(
    french: httpx.AsyncClient,
    world: World,
    sessionmaker: async_sessionmaker[AsyncSession],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    async with unit_of_work(sessionmaker) as session:
        await record(session, world.admin.id, "web", "job.submit", "job", 7, "10.0.0.2")
    csrf = await sign_in(french, "admin")
    for path in ("/admin/", "/admin/users", "/admin/projects", "/admin/import", "/admin/audit"):
        assert_french(await french.get(path))
    assert_french(await french.get(f"/admin/users/{world.alice.id}"))
    assert_french(await french.get(f"/admin/projects/{world.physics.id}"))
    assert_french(await french.get("/admin/audit", params={"surface": "web", "before": 10**6}))
    monkeypatch.setattr(admin_audit, "_cluster", lambda clusters, name: None)
    monkeypatch.setattr(admin_audit, "_slurm_state", _slurm_state)
    compared = await french.post(
        "/admin/import/preview", data={"csrf_token": csrf, "cluster": "testcluster"}
    )
    assert_french(compared)
    assert "rôle différent" in compared.text and "signalé seulement" in compared.text
