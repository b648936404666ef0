"""Delivers the outbox from inside the poller process, while that process is the active one.

Each turn claims a batch (one short transaction), delivers it with no transaction open, and
settles each row in its own short transaction. The guarantee is at least once: a row is sent
twice only when its dispatcher dies or stalls for a whole claim (two minutes) after the mail
server or receiver accepted it and before the outcome was written (docs/adr/0013).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from datetime import datetime

import httpx
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.config import Settings
from app.models.base import utc_now
from app.notifications import outbox, wording
from app.notifications.delivery import send_email, send_webhook, webhook_client
from app.notifications.retry import CLAIM_DURATION
from app.notifications.wording import english
from app.observability.supervisor import TaskBoard, cause_of
from app.vocabulary.notify import Channel

logger = logging.getLogger(__name__)
DISPATCHER_TASK = "notifications"
# A delivery that raised instead of giving an outcome; counted as a failure of its own task.
DELIVERY_TASK = "notification-delivery"
BATCH = 10
# Batches per turn, so a backlog cannot keep the loop from noticing it lost its lease.
MAX_BATCHES = 10


async def _send(
    settings: Settings, client: httpx.AsyncClient, claimed: outbox.Claimed
) -> outbox.Outcome:
    if claimed.channel == Channel.EMAIL:
        return await send_email(settings, claimed)
    return await send_webhook(settings, client, claimed)


async def deliver(
    settings: Settings,
    client: httpx.AsyncClient,
    claimed: outbox.Claimed,
    board: TaskBoard | None = None,
) -> outbox.Outcome:
    """The outcome of one delivery, whatever happens in it.

    The senders turn every failure they know of into an outcome; anything else is a fault
    this notification's data triggers in our code, and sending it again would fail the same
    way: so it fails for good, with the cause, instead of ending the dispatcher.
    """
    try:
        return await _send(settings, client, claimed)
    except Exception as error:
        logger.exception("notification %s could not be delivered", claimed.id)
        (board or TaskBoard()).crashed(DELIVERY_TASK, error)
        reason = cause_of(error)
        return outbox.Outcome(
            False, error=english(wording.UNSENDABLE, reason=reason), is_permanent=True
        )


async def _deliver_and_settle(
    settings: Settings,
    sessionmaker: async_sessionmaker[AsyncSession],
    client: httpx.AsyncClient,
    claimed: outbox.Claimed,
    board: TaskBoard | None = None,
) -> bool:
    result = await deliver(settings, client, claimed, board)
    await outbox.settle(sessionmaker, claimed, result, utc_now())
    if not result.is_success:
        logger.info(
            "notification %s attempt %s failed: %s", claimed.id, claimed.attempt, result.error
        )
    return result.is_success


async def dispatch_once(
    settings: Settings,
    sessionmaker: async_sessionmaker[AsyncSession],
    client: httpx.AsyncClient,
    now: datetime | None = None,
    board: TaskBoard | None = None,
) -> int:
    """Deliver what is due now; returns how many deliveries succeeded."""
    sent = 0
    for _ in range(MAX_BATCHES):
        batch = await outbox.claim(
            sessionmaker, now=now or utc_now(), limit=BATCH, duration=CLAIM_DURATION
        )
        if not batch:
            break
        results = await asyncio.gather(
            *(_deliver_and_settle(settings, sessionmaker, client, item, board) for item in batch)
        )
        sent += sum(results)
    return sent


async def _wait(stop_event: asyncio.Event, seconds: float) -> None:
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(stop_event.wait(), timeout=seconds)


async def dispatch_forever(
    settings: Settings,
    sessionmaker: async_sessionmaker[AsyncSession],
    stop_event: asyncio.Event,
    *,
    holds_lease: Callable[[], Awaitable[bool]],
    interval: float,
    board: TaskBoard | None = None,
) -> None:
    """Every ``interval`` seconds, deliver while this process holds a poll lease (the
    poller that runs this loop says so through ``holds_lease``).

    Standbys stay idle, so one process sends at a time in the normal case; the claims keep
    deliveries single even when two processes overlap during a takeover.
    """
    async with webhook_client() as client:
        while not stop_event.is_set():
            try:
                if await holds_lease():
                    await dispatch_once(settings, sessionmaker, client, board=board)
            except (SQLAlchemyError, OSError):
                logger.exception("notification dispatch cannot reach the database")
            await _wait(stop_event, interval)
