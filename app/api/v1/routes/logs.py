from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator
from typing import Annotated

from fastapi import APIRouter, Header, Query, Request
from fastapi.responses import StreamingResponse
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.api.v1.deps import Principal, Reader, RegistryDep
from app.api.v1.errors import BadRequest
from app.api.v1.params import PathId
from app.api.v1.schemas import LogChunkOut
from app.deps import SessionDep
from app.errors import PortalError
from app.jobs import logs
from app.jobs.logs import LOG_PAGE_BYTES, MAX_PAGE_BYTES, LogChunk, LogStream

logger = logging.getLogger(__name__)
router = APIRouter(prefix="/jobs/{job_id}/logs", tags=["logs"])


def chunk_out(chunk: LogChunk) -> LogChunkOut:
    return LogChunkOut(
        stream=chunk.stream,
        data=chunk.text,
        offset=chunk.offset,
        next_offset=chunk.next_offset,
        size=chunk.size,
        eof=chunk.eof,
        is_missing=chunk.is_missing,
    )


def _sessionmaker(request: Request) -> async_sessionmaker[AsyncSession]:
    maker: async_sessionmaker[AsyncSession] = request.app.state.sessionmaker
    return maker


@router.get("/{stream}", response_model=LogChunkOut, summary="A page of a job's output")
async def read_job_log(
    request: Request,
    registry: RegistryDep,
    principal: Reader,
    job_id: PathId,
    stream: LogStream,
    offset: Annotated[int, Query(ge=0, le=2**62)] = 0,
    limit: Annotated[int, Query(ge=1, le=MAX_PAGE_BYTES)] = LOG_PAGE_BYTES,
) -> LogChunkOut:
    chunk = await logs.read_log(
        _sessionmaker(request), registry, principal.actor, job_id, stream, offset, limit
    )
    return chunk_out(chunk)


def _resume_offset(last_event_id: str | None, offset: int) -> int:
    if last_event_id is None:
        return offset
    if not last_event_id.isdigit() or len(last_event_id) > 18:
        raise BadRequest("Last-Event-ID must be a byte offset this stream sent.")
    return int(last_event_id)


def _event(name: str, data: str, event_id: int | None = None) -> str:
    head = f"id: {event_id}\n" if event_id is not None else ""
    return f"{head}event: {name}\ndata: {data}\n\n"


async def _events(
    request: Request,
    registry: RegistryDep,
    principal: Principal,
    job_id: PathId,
    stream: LogStream,
    offset: int,
) -> AsyncIterator[str]:
    chunks = logs.follow_log(
        _sessionmaker(request), registry, principal.actor, job_id, stream, offset
    )
    try:
        async for chunk in chunks:
            yield _event("log", chunk_out(chunk).model_dump_json(), chunk.next_offset)
    except PortalError as error:
        # Headers are gone by now, so the error travels as an event.
        body = {"error": error.error_type, "detail": error.detail}
        yield _event("error", json.dumps(body))
        return
    yield _event("end", json.dumps({"job_id": job_id}))


@router.get(
    "/{stream}/follow",
    summary="Follow a job's output (server-sent events)",
    response_class=StreamingResponse,
    responses={
        200: {
            "content": {
                "text/event-stream": {
                    "example": 'id: 12\nevent: log\ndata: {"data": "hi\\n", ...}\n\n'
                }
            },
            "description": "`log` events (id = next byte offset; resume with Last-Event-ID), "
            "then one `end` event once the job has ended and all output was sent.",
        }
    },
)
async def follow_job_log(
    request: Request,
    session: SessionDep,
    registry: RegistryDep,
    principal: Reader,
    job_id: PathId,
    stream: LogStream,
    offset: Annotated[int, Query(ge=0, le=2**62)] = 0,
    last_event_id: Annotated[str | None, Header(alias="Last-Event-ID")] = None,
) -> StreamingResponse:
    start = _resume_offset(last_event_id, offset)
    # Authorize before the 200 is sent, so "not yours" is still a proper 404.
    await logs.find_log_source(session, principal.actor, job_id, stream)
    return StreamingResponse(
        _events(request, registry, principal, job_id, stream, start),
        media_type="text/event-stream",
        headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"},
    )
