"""Announcements (administrators' and clusters' maintenance windows), and dismissing one."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Request, Response, status

from app.announcements import service
from app.api.v1.announcement_schemas import AnnouncementIn, AnnouncementOut, AnnouncementPageOut
from app.api.v1.deps import OriginDep, Reader, Submitter
from app.api.v1.pagination import decode_cursor, next_page
from app.api.v1.params import PathId
from app.api.v1.schemas import errors
from app.deps import SessionDep

router = APIRouter(prefix="/announcements", tags=["announcements"])


def announcement_out(found: service.AnnouncementView) -> AnnouncementOut:
    return AnnouncementOut(
        id=found.id,
        source="maintenance" if found.source == "maintenance" else "admin",
        text=found.text,
        shown_from=found.shown_from,
        shown_until=found.shown_until,
        is_dismissible=found.is_dismissible,
        is_dismissed=found.is_dismissed,
        cluster=found.cluster,
        window_start=found.window_start,
        window_end=found.window_end,
    )


@router.get(
    "",
    response_model=AnnouncementPageOut,
    summary="What is announced now, newest first",
    responses=errors(400),
)
async def list_announcements(
    request: Request,
    session: SessionDep,
    principal: Reader,
    dismissed: Annotated[
        bool, Query(description="Include those you dismissed (false: only the others)")
    ] = True,
    limit: Annotated[int, Query(ge=1, le=200)] = 50,
    cursor: Annotated[str | None, Query(max_length=64)] = None,
) -> AnnouncementPageOut:
    found = await service.shown(session, principal.actor, after=decode_cursor(cursor), limit=limit)
    after = found[-1].id if len(found) == limit else None
    items = [announcement_out(a) for a in found if dismissed or not a.is_dismissed]
    next_cursor, next_url = next_page(request, after)
    return AnnouncementPageOut(items=items, next_cursor=next_cursor, next=next_url)


@router.post(
    "/{announcement_id}/dismiss",
    status_code=status.HTTP_204_NO_CONTENT,
    response_class=Response,
    summary="Dismiss an announcement for yourself",
    responses=errors(404),
)
async def dismiss_announcement(
    session: SessionDep, principal: Submitter, announcement_id: PathId
) -> Response:
    await service.dismiss(session, principal.actor, announcement_id)
    return Response(status_code=status.HTTP_204_NO_CONTENT)


@router.post(
    "",
    response_model=AnnouncementOut,
    status_code=status.HTTP_201_CREATED,
    summary="Post an announcement (site administrators, admin scope)",
    responses=errors(),
)
async def post_announcement(
    session: SessionDep, principal: Submitter, origin: OriginDep, body: AnnouncementIn
) -> AnnouncementOut:
    draft = service.Draft(body.text, body.shown_from, body.shown_until, body.is_dismissible)
    return announcement_out(await service.post(session, principal.actor, draft, origin))


@router.delete(
    "/{announcement_id}",
    status_code=status.HTTP_204_NO_CONTENT,
    response_class=Response,
    summary="Withdraw an administrator's announcement (site administrators, admin scope)",
    responses=errors(404),
)
async def withdraw_announcement(
    session: SessionDep, principal: Submitter, origin: OriginDep, announcement_id: PathId
) -> Response:
    await service.withdraw(session, principal.actor, announcement_id, origin)
    return Response(status_code=status.HTTP_204_NO_CONTENT)
