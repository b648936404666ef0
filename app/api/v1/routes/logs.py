from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator
from typing import Annotated

from fastapi import APIRouter, Depends, Header, Query
from fastapi.sse import EventSourceResponse, ServerSentEvent

from app.api.v1.deps import Reader
from app.api.v1.errors import BadRequest
from app.api.v1.params import PathId
from app.api.v1.schemas import LogChunkOut, errors
from app.deps import RegistryDep, SessionDep, SessionmakerDep
from app.jobs import logs
from app.jobs.log_events import log_events
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


@router.get(
    "/{stream}",
    response_model=LogChunkOut,
    summary="A page of a job's output",
    responses=errors(404, 503),
)
async def read_job_log(
    maker: SessionmakerDep,
    registry: RegistryDep,
    principal: Reader,
    job_id: PathId,
    stream: LogStream,
    offset: Annotated[int, Query(ge=0, le=2**62)] = 0,
    limit: Annotated[int, Query(ge=1, le=MAX_PAGE_BYTES)] = LOG_PAGE_BYTES,
) -> LogChunkOut:
    chunk = await logs.read_log(maker, registry, principal.actor, job_id, stream, offset, limit)
    return chunk_out(chunk)


def _resume_offset(last_event_id: str | None, offset: int) -> int:
    if last_event_id is None:
        return offset
    if not last_event_id.isdigit() or len(last_event_id) > 18:
        raise BadRequest("Last-Event-ID must be a byte offset this stream sent.")
    return int(last_event_id)


async def authorized_start(
    session: SessionDep,
    principal: Reader,
    job_id: PathId,
    stream: LogStream,
    offset: Annotated[int, Query(ge=0, le=2**62)] = 0,
    last_event_id: Annotated[str | None, Header(alias="Last-Event-ID")] = None,
) -> int:
    """Where the stream starts; authorized before the 200 is sent, so "not yours" is still
    a proper 404 rather than an error event."""
    start = _resume_offset(last_event_id, offset)
    await logs.find_log_source(session, principal.actor, job_id, stream)
    return start


@router.get(
    "/{stream}/follow",
    summary="Follow a job's output (server-sent events)",
    response_class=EventSourceResponse,
    responses=errors(400, 404, 503, streams=True)
    | {
        200: {
            "content": {
                "text/event-stream": {
                    "example": 'event: log\ndata: {"data": "hi\\n", ...}\nid: 12\n\n'
                }
            },
            "description": "`log` events (id = next byte offset; resume with Last-Event-ID), "
            "one `error` event (JSON with `error` and `detail`) if the output cannot be read "
            "any further, then always one `end` event: after the job has ended and all output "
            "was sent, or after an `error`. Comment lines keep an idle stream alive.",
        }
    },
)
async def follow_job_log(
    maker: SessionmakerDep,
    registry: RegistryDep,
    principal: Reader,
    job_id: PathId,
    stream: LogStream,
    start: Annotated[int, Depends(authorized_start)],
) -> AsyncIterator[ServerSentEvent]:
    chunks = logs.follow_log(maker, registry, principal.actor, job_id, stream, start)
    async for event in log_events(chunks):
        if event.chunk is not None:
            data = chunk_out(event.chunk).model_dump_json()
            yield ServerSentEvent(raw_data=data, event="log", id=str(event.chunk.next_offset))
        elif event.error is not None:
            body = {"error": event.error.error_type, "detail": event.error.detail}
            yield ServerSentEvent(raw_data=json.dumps(body), event="error")
        else:
            yield ServerSentEvent(raw_data=json.dumps({"job_id": job_id}), event="end")
