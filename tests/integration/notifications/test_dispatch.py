"""Delivery against a real SMTP server and a real HTTP receiver on this machine."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import timedelta

import pytest
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.config import Settings
from app.models.base import utc_now
from app.models.notifications import DeliveryAttempt, NotificationRule
from app.notifications import dispatcher, signing
from app.notifications.delivery import webhook_client
from app.notifications.dispatcher import dispatch_once
from app.notifications.outbox import Outcome
from app.poller import store
from app.poller.rules import Transition
from tests.factories import make_job
from tests.integration.notifications.conftest import add_rule, outbox_rows
from tests.notify_servers import Mailbox, Receiver, smtp_server, webhook_receiver
from tests.world import World


@pytest.fixture
def mail() -> Iterator[tuple[Mailbox, int]]:
    with smtp_server() as server:
        yield server


@pytest.fixture
def hooks() -> Iterator[tuple[Receiver, str]]:
    with webhook_receiver() as receiver:
        yield receiver


def _settings(db_url: str, smtp_port: int, *, allow_private: bool = True) -> Settings:
    return Settings(
        database_url=db_url,
        smtp_host="127.0.0.1",
        smtp_port=smtp_port,
        smtp_security="none",
        smtp_from="portal@example.org",
        webhook_allow_private=allow_private,
    )


async def _job_that_ends(
    sessionmaker: async_sessionmaker[AsyncSession], world: World, url: str
) -> tuple[int, NotificationRule]:
    async with sessionmaker() as session:
        job = await make_job(
            session,
            world.alice,
            world.physics,
            state="running",
            slurm_job_id="77",
            name="sim-7",
            started_at=utc_now(),
            exit_code=0,
        )
        await session.commit()
    await add_rule(sessionmaker, world.alice, "ended")
    hook = await add_rule(sessionmaker, world.alice, "ended", job=job, webhook_url=url)
    await store.apply_transitions(sessionmaker, [Transition(job.id, "running", "completed")])
    return job.id, hook


async def test_a_job_end_sends_one_email_and_one_signed_webhook(
    db_url: str,
    sessionmaker: async_sessionmaker[AsyncSession],
    world: World,
    mail: tuple[Mailbox, int],
    hooks: tuple[Receiver, str],
) -> None:
    (mailbox, port), (receiver, url) = mail, hooks
    job_id, hook = await _job_that_ends(sessionmaker, world, url)
    async with webhook_client() as client:
        assert await dispatch_once(_settings(db_url, port), sessionmaker, client) == 2
        assert await dispatch_once(_settings(db_url, port), sessionmaker, client) == 0
    [(recipients, message)] = mailbox.messages
    assert recipients == ["alice@example.org"]
    assert message["Subject"] == "Job sim-7 ended: completed"
    [request] = receiver.requests
    assert signing.is_valid(hook.secret or "", request.body, request.headers["X-Portal-Signature"])
    payload = json.loads(request.body)
    assert payload["event"] == "ended" and payload["job"]["id"] == job_id
    assert str(payload["timestamp"]) == request.headers["X-Portal-Timestamp"]
    assert request.headers["Host"] == url.split("/")[2]
    assert {row.status for row in await outbox_rows(sessionmaker)} == {"sent"}


async def test_a_failing_receiver_is_retried_after_the_back_off_and_logged(
    db_url: str,
    sessionmaker: async_sessionmaker[AsyncSession],
    world: World,
    mail: tuple[Mailbox, int],
    hooks: tuple[Receiver, str],
) -> None:
    (_, port), (receiver, url) = mail, hooks
    receiver.statuses.append(500)
    await _job_that_ends(sessionmaker, world, url)
    settings = _settings(db_url, port)
    async with webhook_client() as client:
        assert await dispatch_once(settings, sessionmaker, client) == 1
        later = utc_now() + timedelta(seconds=31)
        assert await dispatch_once(settings, sessionmaker, client, now=later) == 1
    assert len(receiver.requests) == 2
    async with sessionmaker() as session:
        log = list(await session.scalars(select(DeliveryAttempt).order_by(DeliveryAttempt.id)))
    # The e-mail and the webhook are delivered side by side: either may be logged first.
    hook_attempts = [a for a in log if a.channel == "webhook"]
    hooks_log = [(a.attempt, a.is_success, a.status_code) for a in hook_attempts]
    assert hooks_log == [(1, False, 500), (2, True, 200)]
    assert hook_attempts[0].error == "The receiver answered 500 Internal Server Error."


async def test_a_loopback_webhook_is_refused_when_the_operator_has_not_allowed_it(
    db_url: str,
    sessionmaker: async_sessionmaker[AsyncSession],
    world: World,
    mail: tuple[Mailbox, int],
    hooks: tuple[Receiver, str],
) -> None:
    (_, port), (receiver, url) = mail, hooks
    await _job_that_ends(sessionmaker, world, url)
    async with webhook_client() as client:
        await dispatch_once(_settings(db_url, port, allow_private=False), sessionmaker, client)
    assert receiver.requests == []
    statuses = {(r.event, r.status) for r in await outbox_rows(sessionmaker)}
    assert statuses == {("ended", "sent"), ("ended", "failed")}


async def test_a_rule_stored_with_a_host_name_headers_cannot_carry_is_delivered_to_its_ascii_form(
    db_url: str,
    sessionmaker: async_sessionmaker[AsyncSession],
    world: World,
    mail: tuple[Mailbox, int],
    hooks: tuple[Receiver, str],
) -> None:
    (_, port), (receiver, url) = mail, hooks
    # Full-width "localhost", as rules were stored before host names were normalised.
    typed = url.replace("127.0.0.1", "\uff2c\uff2f\uff23\uff21\uff2c\uff28\uff2f\uff33\uff34")
    await _job_that_ends(sessionmaker, world, typed)
    async with webhook_client() as client:
        assert await dispatch_once(_settings(db_url, port), sessionmaker, client) == 2
    [request] = receiver.requests
    assert request.headers["Host"] == url.split("/")[2].replace("127.0.0.1", "localhost")


async def test_a_delivery_that_raises_fails_for_good_with_its_cause_and_the_rest_go_out(
    db_url: str,
    sessionmaker: async_sessionmaker[AsyncSession],
    world: World,
    mail: tuple[Mailbox, int],
    hooks: tuple[Receiver, str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    (mailbox, port), (receiver, url) = mail, hooks

    async def broken(*_: object) -> Outcome:
        raise RuntimeError("a fault in our own code")

    monkeypatch.setattr(dispatcher, "send_webhook", broken)
    await _job_that_ends(sessionmaker, world, url)
    settings = _settings(db_url, port)
    async with webhook_client() as client:
        assert await dispatch_once(settings, sessionmaker, client) == 1
        later = utc_now() + timedelta(hours=2)
        assert await dispatch_once(settings, sessionmaker, client, now=later) == 0
    assert len(mailbox.messages) == 1 and receiver.requests == []
    statuses = {(r.event, r.status, r.attempts) for r in await outbox_rows(sessionmaker)}
    assert statuses == {("ended", "sent", 1), ("ended", "failed", 1)}
    async with sessionmaker() as session:
        failed = (await session.scalars(select(DeliveryAttempt).filter_by(channel="webhook"))).one()
    assert failed.error == "This notification cannot be sent: RuntimeError: a fault in our own code"
