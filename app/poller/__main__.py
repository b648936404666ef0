"""``python -m app.poller``: poll every configured cluster until SIGTERM or SIGINT.

Logs JSON lines to stderr like the web process; with ``PORTAL_POLLER_METRICS_PORT`` set it
also serves ``/metrics`` (poll cycles, scheduler calls, lease, background task failures,
process memory) and ``/healthz`` (each supervised task: running, failures, last cause) there.
"""

from __future__ import annotations

import asyncio
import os
import signal

from app.config import load_cluster_configs, load_settings
from app.db import create_engine, create_sessionmaker
from app.interactive.definitions import load_app_definitions
from app.interactive.upstream import upstream_client
from app.observability.logs import configure_json_logging
from app.observability.metrics import forget_process
from app.observability.serve import start_metrics_server
from app.observability.supervisor import TaskBoard
from app.poller.idle import IdleWatch
from app.poller.runner import run_poller
from app.scheduler.registry import SchedulerRegistry


async def main() -> None:
    settings = load_settings()
    clusters = load_cluster_configs(settings)
    apps = load_app_definitions(settings)
    engine = create_engine(settings.database_url)
    registry = SchedulerRegistry(clusters)
    stop_event = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop_event.set)
    board = TaskBoard()
    metrics = None
    if settings.poller_metrics_port is not None:
        metrics = await start_metrics_server(
            settings.poller_metrics_host,
            settings.poller_metrics_port,
            health=lambda: {"status": "ok", "tasks": board.describe()},
        )
    # The idle check reaches interactive apps' servers as the proxy does.
    app_servers = upstream_client()
    try:
        adapters = {name: registry.get(name) for name in registry}
        idle = IdleWatch.of(settings, apps, app_servers)
        await run_poller(
            settings, create_sessionmaker(engine), adapters, stop_event, board=board, idle=idle
        )
    finally:
        await app_servers.aclose()
        if metrics is not None:
            metrics.close()
            await metrics.wait_closed()
        await registry.close()
        await engine.dispose()
        forget_process(os.getpid())


if __name__ == "__main__":
    configure_json_logging()
    asyncio.run(main())
