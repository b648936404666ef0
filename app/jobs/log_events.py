"""One vocabulary for following a job's output, on the web page and the API alike.

``log`` events carry the text appended since the last one and, as their id, the byte offset
reached, so a client that reconnects sends ``Last-Event-ID`` and resumes exactly there. One
``error`` event says why the output could not be read any further. One ``end`` event closes
every stream, after the job has ended and its whole file was sent, or after an ``error``:
a browser's EventSource would otherwise reconnect for ever. Each surface renders the events
(escaped HTML for the page, JSON for the API); while nothing happens the framework sends
keep-alive comments, so proxies do not cut a quiet job's stream.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Literal

from app.errors import PortalError
from app.jobs.logs import LogChunk

LogEventName = Literal["log", "error", "end"]


@dataclass(frozen=True, slots=True)
class LogEvent:
    """One event of a followed log: a chunk, an error, or the end."""

    name: LogEventName
    chunk: LogChunk | None = None
    error: PortalError | None = None


async def log_events(chunks: AsyncIterator[LogChunk]) -> AsyncIterator[LogEvent]:
    """``log`` per chunk, ``error`` if reading stopped early, then always ``end``."""
    try:
        async for chunk in chunks:
            yield LogEvent("log", chunk=chunk)
    except PortalError as error:
        # The status line has gone out already, so the problem travels as an event.
        yield LogEvent("error", error=error)
    yield LogEvent("end")
