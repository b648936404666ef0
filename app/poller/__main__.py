"""``python -m app.poller``: poll every configured cluster until SIGTERM or SIGINT.

Logs JSON lines to stderr like the web process; with ``PORTAL_POLLER_METRICS_PORT`` set it
also serves ``/metrics`` (poll cycles, scheduler calls, lease, process memory) there.
"""

from __future__ import annotations

import asyncio
import os
import signal

from app.config import load_cluster_configs, load_settings
from app.db import create_engine, create_sessionmaker
from app.observability.logs import configure_json_logging
from app.observability.metrics import forget_process
from app.observability.serve import start_metrics_server
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
    metrics = None
    if settings.poller_metrics_port is not None:
        metrics = await start_metrics_server(
            settings.poller_metrics_host, settings.poller_metrics_port
        )
    try:
        adapters = {name: registry.get(name) for name in registry}
        await run_poller(settings, create_sessionmaker(engine), adapters, stop_event)
    finally:
        if metrics is not None:
            metrics.close()
            await metrics.wait_closed()
        await registry.close()
        await engine.dispose()
        forget_process(os.getpid())


if __name__ == "__main__":
    configure_json_logging()
    asyncio.run(main())
