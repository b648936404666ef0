"""``python -m app.poller``: poll every configured cluster until SIGTERM or SIGINT."""

from __future__ import annotations

import asyncio
import logging
import signal

from app.config import load_cluster_configs, load_settings
from app.db import create_engine, create_sessionmaker
from app.poller.runner import run_poller
from app.scheduler.registry import SchedulerRegistry


async def main() -> None:
    settings = load_settings()
    clusters = load_cluster_configs(settings)
    engine = create_engine(settings.database_url)
    registry = SchedulerRegistry(clusters)
    stop_event = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop_event.set)
    try:
        adapters = {name: registry.get(name) for name in registry}
        await run_poller(settings, create_sessionmaker(engine), adapters, stop_event)
    finally:
        await registry.close()
        await engine.dispose()


if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s %(message)s")
    asyncio.run(main())
