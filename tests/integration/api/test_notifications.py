"""/api/v1/notifications: your rules and their delivery log."""

from __future__ import annotations

import httpx
import pytest
from sqlalchemy.ext.asyncio import AsyncSession

from app.config import Settings
from tests.factories import make_job
from tests.integration.api.conftest import issue_token
from tests.world import World

RULES = "/api/v1/notifications/rules"
HOOK = "http://127.0.0.1:9/hooks/portal"


@pytest.fixture
def settings(db_url: str) -> Settings:
    # A local receiver needs loopback webhooks, which only tests allow.
    return Settings(
        env="dev",
        database_url=db_url,
        run_poller_in_web=False,
        smtp_host="127.0.0.1",
        webhook_allow_private=True,
    )


async def test_email_rule_for_all_jobs_is_listed_without_a_secret(
    client: httpx.AsyncClient, session: AsyncSession, world: World
) -> None:
    headers = await issue_token(session, world.alice)
    created = await client.post(RULES, json={"event": "ended", "channel": "email"}, headers=headers)
    assert created.status_code == 201, created.text
    body = created.json()
    assert (body["job_id"], body["target"], body["secret"]) == (None, "alice@example.org", None)
    listed = (await client.get(RULES, headers=headers)).json()
    assert [rule["id"] for rule in listed] == [body["id"]]
    assert "secret" not in listed[0]
    assert (await client.get("/api/v1/notifications/deliveries", headers=headers)).json() == []


async def test_webhook_rule_returns_its_secret_once(
    client: httpx.AsyncClient, session: AsyncSession, world: World
) -> None:
    job = await make_job(session, world.alice, world.physics)
    headers = await issue_token(session, world.alice)
    rule = {"event": "failed", "channel": "webhook", "job_id": job.id, "webhook_url": HOOK}
    created = await client.post(RULES, json=rule, headers=headers)
    assert created.status_code == 201, created.text
    assert len(created.json()["secret"]) >= 40
    again = await client.post(RULES, json=rule, headers=headers)
    assert again.status_code == 422
    assert again.json()["detail"] == "You already have this rule."


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("file:///etc/passwd", "Use an http:// or https:// address."),
        (
            "https://no-such-host.invalid/x",
            "The host name no-such-host.invalid cannot be resolved.",
        ),
        (
            "https://exa mple.org/x",
            "exa mple.org is not a valid host name (letters, digits and hyphens in each part).",
        ),
    ],
)
async def test_unusable_webhook_addresses_are_refused_by_field(
    client: httpx.AsyncClient, session: AsyncSession, world: World, url: str, message: str
) -> None:
    headers = await issue_token(session, world.alice)
    rule = {"event": "ended", "channel": "webhook", "webhook_url": url}
    refused = await client.post(RULES, json=rule, headers=headers)
    assert refused.status_code == 422
    assert refused.json()["fields"] == {"webhook_url": message}


async def test_a_host_name_typed_in_other_letters_is_stored_as_it_is_delivered_to(
    client: httpx.AsyncClient, session: AsyncSession, world: World
) -> None:
    headers = await issue_token(session, world.alice)
    # Full-width letters: the resolver maps them to "localhost", an HTTP header cannot carry them.
    rule = {
        "event": "ended",
        "channel": "webhook",
        "webhook_url": "http://\uff2c\uff2f\uff23\uff21\uff2c\uff28\uff2f\uff33\uff34:9/in",
    }
    created = await client.post(RULES, json=rule, headers=headers)
    assert created.status_code == 201, created.text
    assert created.json()["target"] == "http://localhost:9/in"


async def test_nobody_watches_a_job_they_cannot_see(
    client: httpx.AsyncClient, session: AsyncSession, world: World
) -> None:
    job = await make_job(session, world.alice, world.physics)
    headers = await issue_token(session, world.bob)
    rule = {"event": "ended", "channel": "email", "job_id": job.id}
    assert (await client.post(RULES, json=rule, headers=headers)).status_code == 404
    carol = await issue_token(session, world.carol)
    assert (await client.post(RULES, json=rule, headers=carol)).status_code == 201


async def test_rules_are_deleted_by_their_owner_only(
    client: httpx.AsyncClient, session: AsyncSession, world: World
) -> None:
    alice = await issue_token(session, world.alice)
    bob = await issue_token(session, world.bob)
    rule_id = (
        await client.post(RULES, json={"event": "started", "channel": "email"}, headers=alice)
    ).json()["id"]
    assert (await client.delete(f"{RULES}/{rule_id}", headers=bob)).status_code == 404
    assert (await client.delete(f"{RULES}/{rule_id}", headers=alice)).status_code == 204
    assert (await client.get(RULES, headers=alice)).json() == []


async def test_a_read_token_cannot_add_rules(
    client: httpx.AsyncClient, session: AsyncSession, world: World
) -> None:
    headers = await issue_token(session, world.alice, scopes=("read",))
    refused = await client.post(RULES, json={"event": "ended", "channel": "email"}, headers=headers)
    assert refused.status_code == 403
    assert (await client.get(RULES, headers=headers)).status_code == 200


async def test_idle_session_warnings_are_a_rule_by_email_or_webhook_not_by_this_browser(
    client: httpx.AsyncClient, session: AsyncSession, world: World
) -> None:
    headers = await issue_token(session, world.alice)

    by_mail = await client.post(
        RULES, json={"event": "session_idle", "channel": "email"}, headers=headers
    )
    in_browser = await client.post(
        RULES, json={"event": "session_idle", "channel": "browser"}, headers=headers
    )

    assert by_mail.status_code == 201, by_mail.text
    assert by_mail.json()["event"] == "session_idle"
    assert in_browser.status_code == 422
    assert "sessions page shows this warning" in in_browser.text
