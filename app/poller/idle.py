"""The idle check of interactive sessions, as a poll cycle's extra work (ADR 0002's budget).

It runs after a cycle that reached its cluster, every ``PORTAL_IDLE_EVERY`` cycles, and asks
at most ``PORTAL_IDLE_BATCH`` sessions (app/interactive/idle_check.py). A failing check is
logged and left for its next turn: it never fails the cycle, which has already been written.
"""

from __future__ import annotations

import logging

from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.interactive.idle_check import IdleWatch, check_idle
from app.models.base import utc_now
from app.scheduler.base import SchedulerAdapter

__all__ = ["IdleWatch", "check_idle_after"]
logger = logging.getLogger(__name__)


async def check_idle_after(
    sessionmaker: async_sessionmaker[AsyncSession],
    cluster: str,
    adapter: SchedulerAdapter,
    watch: IdleWatch,
) -> int:
    """The remote calls the check made (0 when it failed)."""
    try:
        return await check_idle(sessionmaker, cluster, adapter, watch, utc_now())
    except (SQLAlchemyError, OSError):
        logger.exception("idle check of cluster %s failed", cluster)
        return 0
