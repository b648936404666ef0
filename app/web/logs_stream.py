"""A job's stdout/stderr in the browser: paged pages, a download, and a live tail over SSE.

The live tail speaks the vocabulary of ``app.jobs.log_events`` (``log``, ``error``, ``end``)
with HTML-escaped text, which htmx's SSE extension appends to a ``<pre>``; without an
explicit start it opens on the end of a long file.
"""

from __future__ import annotations

import codecs
import html
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Annotated

from fastapi import APIRouter, Depends, Header, Query, Request
from fastapi.responses import Response, StreamingResponse
from fastapi.sse import EventSourceResponse, ServerSentEvent
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.deps import RegistryDep, SessionDep, SessionmakerDep
from app.errors import ValidationFailed
from app.i18n import _
from app.jobs import logs
from app.jobs.log_events import log_events
from app.jobs.logs import LOG_PAGE_BYTES, MAX_PAGE_BYTES, LogChunk, LogStream
from app.jobs.service import get_job
from app.params import PathId
from app.scheduler.registry import Schedulers
from app.users.actor import Actor
from app.web.auth import CurrentUser, WebContextDep
from app.web.views import page

router = APIRouter(include_in_schema=False)
# Without an explicit start, the live view opens on the end of a long file.
TAIL_BYTES = LOG_PAGE_BYTES
MAX_OFFSET = 2**62


def resume_offset(last_event_id: str | None, offset: int | None) -> int | None:
    """Where to start: the browser's Last-Event-ID wins over ``?offset``; None means tail."""
    if last_event_id is not None:
        if not last_event_id.isdigit() or len(last_event_id) > 18:
            raise ValidationFailed(fields={"Last-Event-ID": _("must be a byte offset")})
        return int(last_event_id)
    return offset


@dataclass(frozen=True, slots=True)
class _Reader:
    """What reading a log over time takes: a session per read, and the cluster's adapter."""

    sessionmaker: async_sessionmaker[AsyncSession]
    registry: Schedulers


async def _reader(sessionmaker: SessionmakerDep, registry: RegistryDep) -> _Reader:
    return _Reader(sessionmaker, registry)


ReaderDep = Annotated[_Reader, Depends(_reader)]


async def _tail_start(reader: _Reader, actor: Actor, job_id: PathId, stream: LogStream) -> int:
    probe = await logs.read_log(reader.sessionmaker, reader.registry, actor, job_id, stream, 0, 1)
    return max(0, probe.size - TAIL_BYTES)


async def authorized_start(
    session: SessionDep,
    actor: CurrentUser,
    job_id: PathId,
    stream: LogStream,
    offset: Annotated[int | None, Query(ge=0, le=MAX_OFFSET)] = None,
    last_event_id: Annotated[str | None, Header(alias="Last-Event-ID")] = None,
) -> int | None:
    """Where the stream starts; authorized before the 200 goes out, so someone else's job
    is still a plain 404 rather than an error event."""
    start = resume_offset(last_event_id, offset)
    await logs.find_log_source(session, actor, job_id, stream)
    return start


async def _chunks(
    reader: _Reader, actor: Actor, job_id: int, stream: LogStream, start: int | None
) -> AsyncIterator[LogChunk]:
    if start is None:
        start = await _tail_start(reader, actor, job_id, stream)
        if start:
            # A notice, not file content: its id still resumes where the file part begins.
            notice = _("[%(count)s earlier bytes not shown]", count=start) + "\n"
            yield LogChunk(stream, notice.encode(), start, start, start, eof=False)
    chunks = logs.follow_log(reader.sessionmaker, reader.registry, actor, job_id, stream, start)
    async for chunk in chunks:
        yield chunk


@router.get(
    "/jobs/{job_id:int}/logs/{stream}/stream",
    name="job_log_stream",
    response_class=EventSourceResponse,
)
async def stream_log(
    reader: ReaderDep,
    actor: CurrentUser,
    job_id: PathId,
    stream: LogStream,
    start: Annotated[int | None, Depends(authorized_start)],
) -> AsyncIterator[ServerSentEvent]:
    """The live tail: HTML-escaped text htmx's SSE extension appends to a ``<pre>``."""
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    async for event in log_events(_chunks(reader, actor, job_id, stream, start)):
        if event.chunk is not None:
            text = html.escape(decoder.decode(event.chunk.data))
            yield ServerSentEvent(raw_data=text, event="log", id=str(event.chunk.next_offset))
        elif event.error is not None:
            yield ServerSentEvent(raw_data=html.escape(event.error.detail), event="error")
        else:
            yield ServerSentEvent(raw_data="", event="end")


@router.get("/jobs/{job_id:int}/logs/{stream}", name="job_log_page")
async def log_page(
    request: Request,
    reader: ReaderDep,
    session: SessionDep,
    actor: CurrentUser,
    web: WebContextDep,
    job_id: PathId,
    stream: LogStream,
    offset: Annotated[int, Query(ge=0, le=MAX_OFFSET)] = 0,
    limit: Annotated[int, Query(ge=1, le=MAX_PAGE_BYTES)] = LOG_PAGE_BYTES,
) -> Response:
    """One page of the log as HTML, with links to the previous and next pages."""
    job = await get_job(session, actor, job_id)
    shown = {
        "job_name": job.name,
        "slurm_job_id": job.slurm_job_id,
        "stream_label": _("Standard output") if stream == "stdout" else _("Standard error"),
    }
    chunk = await logs.read_log(
        reader.sessionmaker, reader.registry, actor, job_id, stream, offset, limit
    )
    base = f"/jobs/{job_id}/logs/{stream}"
    context = {
        "job_id": job_id,
        "stream": stream,
        "chunk": chunk,
        "text": chunk.text,
        "previous_url": f"{base}?offset={max(0, offset - limit)}&limit={limit}" if offset else None,
        "next_url": None if chunk.eof else f"{base}?offset={chunk.next_offset}&limit={limit}",
        "download_url": f"{base}/download",
        "start": offset,
        **shown,
    }
    return page(request, web, "jobs/log_page.html", context)


async def _whole_file(
    reader: _Reader, actor: Actor, job_id: PathId, stream: LogStream
) -> AsyncIterator[bytes]:
    offset = 0
    while True:
        chunk = await logs.read_log(
            reader.sessionmaker, reader.registry, actor, job_id, stream, offset
        )
        yield chunk.data
        offset = chunk.next_offset
        if chunk.eof or not chunk.data:
            return


@router.get("/jobs/{job_id:int}/logs/{stream}/download", name="job_log_download")
async def download_log(
    reader: ReaderDep,
    session: SessionDep,
    actor: CurrentUser,
    job_id: PathId,
    stream: LogStream,
) -> StreamingResponse:
    """The whole file, streamed page by page so it never sits in memory."""
    await logs.find_log_source(session, actor, job_id, stream)
    filename = f"job-{job_id}-{stream}.txt"
    return StreamingResponse(
        _whole_file(reader, actor, job_id, stream),
        media_type="text/plain; charset=utf-8",
        headers={"Content-Disposition": f'attachment; filename="{filename}"'},
    )
