"""A notification e-mail is written in its recipient's saved language (English when they chose
none); what the delivery log stores stays English and is shown in the reader's language."""

from __future__ import annotations

from collections.abc import Iterator
from email.header import decode_header, make_header
from email.message import Message

import pytest
from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app import i18n
from app.config import Settings
from app.models.base import utc_now
from app.models.notifications import DeliveryAttempt
from app.models.users import User
from app.notifications import wording
from app.notifications.delivery import webhook_client
from app.notifications.dispatcher import dispatch_once
from app.poller import store
from app.poller.rules import Transition
from tests.factories import make_job
from tests.integration.notifications.conftest import add_rule
from tests.notify_servers import Mailbox, smtp_server
from tests.world import World


@pytest.fixture
def mail() -> Iterator[tuple[Mailbox, int]]:
    with smtp_server() as server:
        yield server


def _settings(db_url: str, smtp_port: int | None) -> Settings:
    return Settings(
        database_url=db_url,
        smtp_host="127.0.0.1" if smtp_port else "",
        smtp_port=smtp_port or 25,
        smtp_security="none",
        smtp_from="portal@example.org",
    )


async def _jobs_that_fail(sessionmaker: async_sessionmaker[AsyncSession], world: World) -> None:
    """alice (who chose French) and bob (who chose nothing) each have a job that runs out of
    memory, and a rule to be e-mailed when a job fails."""
    async with sessionmaker() as session:
        await session.execute(update(User).where(User.id == world.alice.id).values(locale="fr"))
        jobs = [
            await make_job(
                session, owner, project, state="running", slurm_job_id=slurm, name=f"sim-{slurm}"
            )
            for owner, project, slurm in (
                (world.alice, world.physics, "71"),
                (world.bob, world.chemistry, "72"),
            )
        ]
        await session.commit()
    for owner in (world.alice, world.bob):
        await add_rule(sessionmaker, owner, "failed")
    transitions = [Transition(job.id, "running", "out_of_memory") for job in jobs]
    await store.apply_transitions(sessionmaker, transitions)


def _read(message: Message) -> tuple[str, str]:
    """The subject and the text of a received message, decoded."""
    body = message.get_payload(decode=True)
    assert isinstance(body, bytes)
    return str(make_header(decode_header(message["Subject"]))), body.decode()


async def test_each_recipient_reads_the_email_in_their_own_language(
    db_url: str,
    sessionmaker: async_sessionmaker[AsyncSession],
    world: World,
    mail: tuple[Mailbox, int],
) -> None:
    mailbox, port = mail
    await _jobs_that_fail(sessionmaker, world)
    async with webhook_client() as client:
        assert await dispatch_once(_settings(db_url, port), sessionmaker, client) == 2
    sent = {recipients[0]: message for recipients, message in mailbox.messages}
    subject, text = _read(sent["alice@example.org"])
    assert subject == "Échec du travail sim-71\u00a0: mémoire épuisée"
    assert "Votre travail « sim-71 » (travail Slurm 71) sur testcluster" in text
    assert "modifiez-la sous Notifications dans le portail" in text
    subject, text = _read(sent["bob@example.org"])
    assert subject == "Job sim-72 failed: out of memory"
    assert "Your job “sim-72” (Slurm job 72) on testcluster is now out of memory." in text


async def test_the_log_keeps_english_and_shows_it_in_the_readers_language(
    db_url: str, sessionmaker: async_sessionmaker[AsyncSession], world: World
) -> None:
    await _jobs_that_fail(sessionmaker, world)
    async with webhook_client() as client:
        await dispatch_once(_settings(db_url, None), sessionmaker, client, now=utc_now())
    async with sessionmaker() as session:
        errors = set(await session.scalars(select(DeliveryAttempt.error)))
    assert errors == {"This portal has no mail server configured."}
    with i18n.use_locale("fr"):
        assert wording.shown(errors.pop()) == "Ce portail n'a aucun serveur de courriel configuré."
        refused = wording.english(wording.RECEIVER_REFUSED, status="500 Internal Server Error")
        assert wording.shown(refused) == "Le destinataire a répondu 500 Internal Server Error."
        assert wording.shown("a receiver's own words") == "a receiver's own words"
