"""Background tasks that outlive each other's failures.

The poller process runs one task per cluster and the notification dispatcher side by side.
Each runs under ``supervise``: an exception that escapes it is logged with its traceback,
counted, shown in ``/healthz`` and the metrics, and the task starts again after a back-off
that doubles while it keeps failing; no exception reaches the task group, so no task ends
another. Only cancellation (shutdown) and ``stop_event`` end a supervised task.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from app.observability.metrics import BACKGROUND_TASK_CRASHES, BACKGROUND_TASK_RUNNING

logger = logging.getLogger(__name__)
FIRST_BACKOFF_SECONDS = 1.0
MAX_BACKOFF_SECONDS = 60.0
# A task that ran this long before failing starts again from the first back-off.
HEALTHY_AFTER_SECONDS = 300.0
MAX_ERROR_LENGTH = 1000


@dataclass
class TaskHealth:
    """What ``/healthz`` says of one supervised task."""

    is_running: bool = False
    crashes: int = 0
    last_error: str | None = None
    last_crash_at: datetime | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "running": self.is_running,
            "crashes": self.crashes,
            "last_error": self.last_error,
            "last_crash_at": self.last_crash_at.isoformat() if self.last_crash_at else None,
        }


@dataclass
class TaskBoard:
    """The supervised tasks of this process, by name."""

    tasks: dict[str, TaskHealth] = field(default_factory=dict)

    def of(self, name: str) -> TaskHealth:
        return self.tasks.setdefault(name, TaskHealth())

    def started(self, name: str) -> None:
        self.of(name).is_running = True
        BACKGROUND_TASK_RUNNING.set(1, name)

    def stopped(self, name: str) -> None:
        self.of(name).is_running = False
        BACKGROUND_TASK_RUNNING.set(0, name)

    def crashed(self, name: str, error: BaseException | str) -> None:
        health = self.of(name)
        health.crashes += 1
        health.last_error = cause_of(error)
        health.last_crash_at = datetime.now(UTC)
        BACKGROUND_TASK_CRASHES.inc(name)

    def describe(self) -> dict[str, dict[str, Any]]:
        return {name: self.tasks[name].as_dict() for name in sorted(self.tasks)}


@dataclass(frozen=True, slots=True)
class Backoff:
    first: float = FIRST_BACKOFF_SECONDS
    longest: float = MAX_BACKOFF_SECONDS
    healthy_after: float = HEALTHY_AFTER_SECONDS

    def delay(self, failures: int) -> float:
        return float(min(self.longest, self.first * 2 ** min(max(failures - 1, 0), 16)))


def cause_of(error: BaseException | str) -> str:
    """One line naming the cause: the exception's type and message."""
    text = error if isinstance(error, str) else f"{type(error).__name__}: {error}"
    return text[:MAX_ERROR_LENGTH]


async def _wait(stop_event: asyncio.Event, seconds: float) -> None:
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(stop_event.wait(), timeout=seconds)


async def _run_once(
    name: str, work: Callable[[], Awaitable[None]], stop_event: asyncio.Event, board: TaskBoard
) -> BaseException | str | None:
    """None when the task ended because it was asked to; otherwise why it ended."""
    board.started(name)
    try:
        await work()
    except Exception as error:
        logger.exception("background task %s failed", name)
        return error
    finally:
        board.stopped(name)
    if stop_event.is_set():
        return None
    logger.error("background task %s ended on its own", name)
    return "ended on its own"


async def supervise(
    name: str,
    work: Callable[[], Awaitable[None]],
    stop_event: asyncio.Event,
    board: TaskBoard,
    backoff: Backoff = Backoff(),
) -> None:
    """Run ``work()`` until ``stop_event`` is set, starting it again whenever it fails."""
    failures = 0
    while not stop_event.is_set():
        started = time.monotonic()
        failure = await _run_once(name, work, stop_event, board)
        if failure is None:
            return
        board.crashed(name, failure)
        failures = 1 if time.monotonic() - started >= backoff.healthy_after else failures + 1
        delay = backoff.delay(failures)
        logger.warning("background task %s starts again in %.1f s", name, delay)
        await _wait(stop_event, delay)
