"""Template previews render in worker processes, never in the web process.

Rendering is linear and bounded (ADR 0009), yet a large template still costs tens of
milliseconds of pure Python. In a thread that time is taken from the event loop through the
GIL, so a user hammering the preview with hostile templates slowed every other request,
``/healthz`` included. Worker processes have their own interpreter: the web process only
pickles the inputs and waits. One pool serves the whole web process, as asyncio's default
thread pool does; it is started on first use (or warmed at start-up) and restarted if a
worker dies.
"""

from __future__ import annotations

import asyncio
import logging
import multiprocessing
import os
import threading
import time
from collections.abc import Mapping
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any

from app import i18n
from app.config import available_cpus
from app.i18n import _
from app.job_templates.context import SubmitContext
from app.models.job_templates import TemplateVersion
from app.models.projects import Project
from app.web.preview import Preview, build_preview

logger = logging.getLogger(__name__)

# A preview of the largest template a user may save renders in well under a second; this
# only guards against a worker that stopped answering.
PREVIEW_TIMEOUT_SECONDS = 10.0
WARM_TIMEOUT_SECONDS = 30.0

_lock = threading.Lock()
_executor: ProcessPoolExecutor | None = None


# Workers yield the CPU to the web process: where previews keep every core busy, the
# scheduler still runs the event loop first, so other requests wait on no preview.
WORKER_NICENESS = 10


def _start_worker(parent: int) -> None:
    """In a worker: run below the web process's priority, and exit once it is gone."""
    try:
        os.nice(WORKER_NICENESS)
    except OSError:
        logger.warning("preview workers could not lower their priority", exc_info=True)
    _exit_with_parent(parent)


def _exit_with_parent(parent: int) -> None:
    """Each worker holds both ends of the pool's queues, so a web process killed with
    SIGKILL would otherwise leave it waiting."""

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(2.0)
        os._exit(0)

    threading.Thread(target=watch, name="parent-watch", daemon=True).start()


def _workers() -> int:
    """Two at most, fewer when several web workers share the CPUs (each has its own pool)."""
    web_workers = os.environ.get("PORTAL_WEB_WORKERS", "1")
    share = available_cpus() // max(1, int(web_workers) if web_workers.isdigit() else 1)
    return max(1, min(2, share))


def _pool() -> ProcessPoolExecutor:
    global _executor
    with _lock:
        if _executor is None:
            # spawn: a fresh interpreter, not a fork of a process holding sockets and threads.
            context = multiprocessing.get_context("spawn")
            _executor = ProcessPoolExecutor(
                max_workers=_workers(),
                mp_context=context,
                initializer=_start_worker,
                initargs=(os.getpid(),),
            )
        return _executor


def _discard(broken: ProcessPoolExecutor) -> None:
    global _executor
    with _lock:
        if _executor is broken:
            _executor = None
    broken.shutdown(wait=False, cancel_futures=True)


def _ready() -> bool:
    return True


def _build_in(
    locale: str,
    version: TemplateVersion,
    values: dict[str, Any],
    project: Project,
    context: SubmitContext,
) -> Preview:
    """In a worker: build_preview with its messages in the language of the page asking."""
    with i18n.use_locale(locale):
        return build_preview(version, values, project, context)


async def warm() -> None:
    """Start the workers now, so the first preview does not wait for their imports."""
    loop = asyncio.get_running_loop()
    pool = _pool()
    started = asyncio.gather(*(loop.run_in_executor(pool, _ready) for _worker in range(_workers())))
    try:
        await asyncio.wait_for(started, WARM_TIMEOUT_SECONDS)
    except TimeoutError:
        logger.warning("preview workers are slow to start; the first previews may wait")
    except BrokenProcessPool:
        logger.warning("preview workers did not start; retried on the first preview")
        _discard(pool)


async def render_preview(
    version: TemplateVersion,
    values: Mapping[str, Any],
    project: Project,
    context: SubmitContext,
) -> Preview:
    """build_preview in a worker process; a lost or stuck worker is a form error, not a 500."""
    loop = asyncio.get_running_loop()
    pool = _pool()
    version, project = _detached(version, project)
    try:
        locale = i18n.current_locale()
        future = loop.run_in_executor(
            pool, _build_in, locale, version, dict(values), project, context
        )
        return await asyncio.wait_for(future, PREVIEW_TIMEOUT_SECONDS)
    except TimeoutError:
        logger.warning("a template preview took longer than %s s", PREVIEW_TIMEOUT_SECONDS)
        return Preview(
            errors={"form": _("The preview took too long to render; try again in a moment.")}
        )
    except BrokenProcessPool:
        logger.warning("a preview worker died; starting new ones", exc_info=True)
        _discard(pool)
        return Preview(errors={"form": _("The preview could not be rendered; try again.")})


def _detached(version: TemplateVersion, project: Project) -> tuple[TemplateVersion, Project]:
    """Plain copies: the rows may belong to a session, and only their columns are needed."""
    copy = TemplateVersion(
        id=version.id,
        script=version.script,
        parameter_schema=version.parameter_schema,
        defaults=version.defaults,
    )
    return copy, Project(
        id=project.id,
        name=project.name,
        cluster=project.cluster,
        slurm_account=project.slurm_account,
    )


def shutdown() -> None:
    global _executor
    with _lock:
        executor, _executor = _executor, None
    if executor is not None:
        executor.shutdown(wait=False, cancel_futures=True)
