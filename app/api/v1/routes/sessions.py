"""Interactive apps and your sessions of them; a session is reached in the browser."""

from __future__ import annotations

from fastapi import APIRouter, Request, status

from app.api.v1.deps import OriginDep, Reader, Submitter
from app.api.v1.params import PathId
from app.api.v1.schemas import errors
from app.api.v1.session_schemas import AppFormOut, AppOut, LaunchIn, NumberOut, SessionOut
from app.deps import (
    AppsDep,
    AppServersDep,
    ClustersDep,
    JobServiceDep,
    RegistryDep,
    SessionDep,
    SessionmakerDep,
)
from app.errors import NotFound
from app.interactive import service
from app.interactive.definitions import AppDefinition, Number
from app.interactive.sessions import (
    LaunchForm,
    SessionView,
    describe,
    ends_asked,
    own_session,
    own_sessions,
)
from app.models.base import utc_now

apps = APIRouter(prefix="/apps", tags=["apps"])
router = APIRouter(prefix="/sessions", tags=["apps"])


def _number(limits: Number) -> NumberOut:
    return NumberOut(default=limits.default, min=limits.min, max=limits.max)


def app_out(definition: AppDefinition) -> AppOut:
    form = definition.form
    return AppOut(
        name=definition.name,
        title=definition.title,
        description=definition.description,
        form=AppFormOut(
            cores=_number(form.cores),
            memory_gb=_number(form.memory_gb),
            time_minutes=_number(form.time_minutes),
            gpus=_number(form.gpus),
        ),
    )


def session_out(request: Request, view: SessionView) -> SessionOut:
    connect = str(request.base_url).rstrip("/") + view.connect_path if view.connect_path else None
    return SessionOut(
        id=view.id,
        app=view.app,
        title=view.title,
        state=view.state,
        job_id=view.job_id,
        slurm_job_id=view.slurm_job_id,
        node=view.node,
        created_at=view.created_at,
        started_at=view.started_at,
        seconds_left=view.seconds_left,
        connect_url=connect,
        values=dict(view.values),
        end_requested=view.end_asked,
        idle_since=view.idle_since if view.is_warned_idle else None,
        idle_ends_at=view.idle_ends_at if view.is_warned_idle else None,
        ended_idle=view.ended_idle,
    )


@apps.get("", response_model=list[AppOut], summary="Apps you can launch", responses=errors())
async def list_apps(principal: Reader, definitions: AppsDep) -> list[AppOut]:
    return [app_out(d) for d in sorted(definitions.values(), key=lambda d: d.title)]


@router.get("", response_model=list[SessionOut], summary="Your sessions", responses=errors())
async def list_sessions(
    request: Request,
    session: SessionDep,
    principal: Reader,
    registry: RegistryDep,
    definitions: AppsDep,
    app_servers: AppServersDep,
) -> list[SessionOut]:
    rows = await own_sessions(session, principal.actor)
    await service.refresh_all(session, principal.actor, rows, definitions, registry, app_servers)
    now = utc_now()
    asked = await ends_asked(session, principal.actor, rows)
    return [session_out(request, describe(row, definitions, now, asked)) for row in rows]


@router.get(
    "/{session_id}", response_model=SessionOut, summary="One session", responses=errors(404)
)
async def get_session(
    request: Request,
    session: SessionDep,
    principal: Reader,
    registry: RegistryDep,
    definitions: AppsDep,
    app_servers: AppServersDep,
    session_id: PathId,
) -> SessionOut:
    row = await own_session(session, principal.actor, session_id)
    await service.refresh_all(session, principal.actor, [row], definitions, registry, app_servers)
    asked = await ends_asked(session, principal.actor, [row])
    return session_out(request, describe(row, definitions, utc_now(), asked))


@router.post(
    "",
    response_model=SessionOut,
    status_code=status.HTTP_201_CREATED,
    summary="Launch an app as a job",
    responses=errors(404, 503),
)
async def launch_session(
    request: Request,
    session: SessionDep,
    principal: Submitter,
    jobs: JobServiceDep,
    registry: RegistryDep,
    definitions: AppsDep,
    clusters: ClustersDep,
    origin: OriginDep,
    body: LaunchIn,
) -> SessionOut:
    definition = definitions.get(body.app)
    if definition is None:
        raise NotFound(f"No app named {body.app}.")
    form = LaunchForm(**body.model_dump(exclude={"app"}))
    home = await service.home_for(session, principal.actor, body.project_id, clusters, registry)
    row = await service.launch(
        session, principal.actor, jobs, definition, form, home, origin=origin
    )
    return session_out(request, describe(row, definitions, utc_now()))


@router.delete(
    "/{session_id}",
    response_model=SessionOut,
    summary="End a session: its job is cancelled",
    responses=errors(404, 409, 503),
)
async def end_session(
    request: Request,
    sessionmaker: SessionmakerDep,
    principal: Submitter,
    jobs: JobServiceDep,
    definitions: AppsDep,
    origin: OriginDep,
    session_id: PathId,
) -> SessionOut:
    row = await service.end_own(sessionmaker, jobs, principal.actor, session_id, origin=origin)
    return session_out(request, describe(row, definitions, utc_now(), {row.job_id}))


@router.post(
    "/{session_id}/keep",
    response_model=SessionOut,
    summary="Keep a session nobody has used for a while: its idle clock starts again",
    responses=errors(404, 409),
)
async def keep_session(
    request: Request,
    session: SessionDep,
    principal: Submitter,
    definitions: AppsDep,
    session_id: PathId,
) -> SessionOut:
    row = await service.keep(session, principal.actor, session_id, utc_now())
    asked = await ends_asked(session, principal.actor, [row])
    return session_out(request, describe(row, definitions, utc_now(), asked))
