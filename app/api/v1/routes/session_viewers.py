"""View-only links to a desktop: its owner names portal users who may watch it (never type)
and revokes them; the page is the same session's, opened by the viewer signed in."""

from __future__ import annotations

from fastapi import APIRouter, Response, status

from app.api.v1.deps import Reader, Submitter
from app.api.v1.params import PathId
from app.api.v1.schemas import errors
from app.api.v1.session_schemas import ViewerIn, ViewerOut
from app.deps import AppsDep, SessionDep
from app.interactive import viewers
from app.interactive.sessions import own_session

router = APIRouter(prefix="/sessions", tags=["apps"])


def _out(view: viewers.ViewerView) -> ViewerOut:
    return ViewerOut(id=view.id, login=view.login, display_name=view.display_name)


@router.get(
    "/{session_id}/viewers",
    response_model=list[ViewerOut],
    summary="Who may watch your desktop",
    responses=errors(404),
)
async def list_viewers(
    session: SessionDep, principal: Reader, session_id: PathId
) -> list[ViewerOut]:
    row = await own_session(session, principal.actor, session_id)
    return [_out(view) for view in (await viewers.viewers_of(session, [row])).get(row.id, [])]


@router.post(
    "/{session_id}/viewers",
    response_model=ViewerOut,
    status_code=status.HTTP_201_CREATED,
    summary="Let another portal user watch your running desktop (view only)",
    responses=errors(404, 422),
)
async def add_viewer(
    session: SessionDep,
    principal: Submitter,
    definitions: AppsDep,
    session_id: PathId,
    body: ViewerIn,
) -> ViewerOut:
    added = await viewers.share(session, principal.actor, session_id, body.login, definitions)
    row = await own_session(session, principal.actor, session_id)
    views = (await viewers.viewers_of(session, [row])).get(row.id, [])
    return next(_out(view) for view in views if view.id == added.id)


@router.delete(
    "/{session_id}/viewers/{viewer_id}",
    status_code=status.HTTP_204_NO_CONTENT,
    summary="Revoke a viewer: an open view closes within seconds",
    responses=errors(404),
)
async def remove_viewer(
    session: SessionDep, principal: Submitter, session_id: PathId, viewer_id: PathId
) -> Response:
    await viewers.revoke(session, principal.actor, session_id, viewer_id)
    return Response(status_code=status.HTTP_204_NO_CONTENT)
