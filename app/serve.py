"""``python -m app.serve [uvicorn options]``: the portal with one web worker per CPU.

Runs ``uvicorn --factory app.main:create_app --workers N``, N from ``PORTAL_WEB_WORKERS``
(default: the CPUs this process may run on). One Python process uses one core at a time, so
a single worker left every other core idle while submissions queued behind each other; the
workers share nothing but the database (ADR 0029). The other options (``--host``,
``--port``, ``--no-proxy-headers``...) are uvicorn's, passed on as given.

The settings are read here first, so a bad configuration stops start-up once with its list
of problems instead of once in every worker.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence

from app.config import Settings, load_settings

WORKERS_VARIABLE = "PORTAL_WEB_WORKERS"


def uvicorn_command(settings: Settings, options: Sequence[str]) -> list[str]:
    """The argv that serves the portal with ``settings``' number of workers."""
    if any(option == "--workers" or option.startswith("--workers=") for option in options):
        raise SystemExit(f"python -m app.serve: set {WORKERS_VARIABLE} instead of --workers")
    workers = str(settings.web_worker_count)
    factory = ["-m", "uvicorn", "--factory", "app.main:create_app", "--workers", workers]
    return [sys.executable, *factory, *options]


def main(argv: Sequence[str] | None = None) -> None:
    settings = load_settings()
    command = uvicorn_command(settings, sys.argv[1:] if argv is None else argv)
    # The workers read it too: each sizes its preview pool to its share of the CPUs.
    os.environ[WORKERS_VARIABLE] = str(settings.web_worker_count)
    os.execv(sys.executable, command)  # noqa: S606 - an argv list, no shell


if __name__ == "__main__":
    main()
