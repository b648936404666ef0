"""``python -m app.reports``: ingest accounting for every cluster until SIGTERM or SIGINT.

One process per cluster holds the ``usage:<cluster>`` lease (the poller's lease table), so
several copies can run for availability without ingesting twice.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
from datetime import timedelta

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.config import load_cluster_configs, load_settings
from app.db import create_engine, create_sessionmaker
from app.models import utc_now
from app.poller import lease
from app.poller.runner import default_holder
from app.reports.ingest import ingest_cycle
from app.scheduler.base import SchedulerAdapter
from app.scheduler.errors import SchedulerError
from app.scheduler.registry import SchedulerRegistry

logger = logging.getLogger("app.reports")
INTERVAL_SECONDS = 300.0


async def ingest_forever(
    sessionmaker: async_sessionmaker[AsyncSession],
    cluster: str,
    adapter: SchedulerAdapter,
    stop_event: asyncio.Event,
    *,
    interval: float = INTERVAL_SECONDS,
) -> None:
    holder = default_holder()
    while not stop_event.is_set():
        duration = timedelta(seconds=interval * 2)
        if await lease.acquire(sessionmaker, f"usage:{cluster}", holder, utc_now(), duration):
            try:
                result = await ingest_cycle(sessionmaker, adapter, cluster)
                logger.info("usage %s: %d jobs stored", cluster, result.stored)
            except SchedulerError:
                logger.exception("usage ingestion for %s failed; retrying later", cluster)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop_event.wait(), timeout=interval)


async def main() -> None:
    settings = load_settings()
    engine = create_engine(settings.database_url)
    registry = SchedulerRegistry(load_cluster_configs(settings))
    stop_event = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop_event.set)
    sessionmaker = create_sessionmaker(engine)
    try:
        async with asyncio.TaskGroup() as group:
            for name in registry:
                adapter = registry.get(name)
                group.create_task(ingest_forever(sessionmaker, name, adapter, stop_event))
    finally:
        await registry.close()
        await engine.dispose()


if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s %(message)s")
    asyncio.run(main())
