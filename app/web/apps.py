"""Interactive apps: the launch forms and the sessions page (the proxy is app_proxy.py)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Annotated, Any

import httpx
from fastapi import Depends, Request
from fastapi.responses import Response
from sqlalchemy.ext.asyncio import AsyncSession
from starlette.datastructures import FormData

from app import i18n
from app.deps import (
    AppsDep,
    AppServersDep,
    ClustersDep,
    JobServiceDep,
    RegistryDep,
    SessionDep,
    SessionmakerDep,
)
from app.errors import NotFound, ValidationFailed
from app.i18n import _, lazy_gettext
from app.interactive import service
from app.interactive.definitions import AppDefinition
from app.interactive.sessions import (
    LaunchForm,
    describe,
    ends_asked,
    own_session,
    own_sessions,
    relaunch_form,
)
from app.models.base import utc_now
from app.params import PathId
from app.scheduler.registry import Schedulers
from app.submissions.choices import actor_projects
from app.templating import is_htmx
from app.users.actor import Actor
from app.web.app_viewers import sharing_context
from app.web.auth import CurrentUser, WebContext, WebContextDep, csrf_protected_router, web_origin
from app.web.views import page, redirect

router = csrf_protected_router()
NUMBERS = ("cores", "memory_gb", "time_minutes", "gpus")
TEXTS = ("partition", "work_dir", "modules", "venv")
# While a session waits for its node or its server, the list looks again this often; while
# one runs, less often (its time left, and its end once the job has ended).
REFRESH_WAITING = "every 3s"
REFRESH_RUNNING = "every 10s"
# The shipped apps' descriptions, so that the catalogue holds them; a site's own apps are
# shown as the site wrote them.
SHIPPED_DESCRIPTIONS = (
    lazy_gettext(
        "Notebooks, a terminal and a file browser, running on a compute node with the "
        "resources you choose."
    ),
    lazy_gettext(
        "A remote desktop (XFCE) on a compute node, in your browser, for programs with windows."
    ),
)


def describe_app(definition: AppDefinition) -> str:
    """The app's description, in the reader's language when the catalogue has it."""
    return i18n.gettext(definition.description) if definition.description else ""


def _definition(definitions: Mapping[str, AppDefinition], app_name: str) -> AppDefinition:
    definition = definitions.get(app_name)
    if definition is None:
        raise NotFound(_("No such app."))
    return definition


@dataclass(frozen=True, slots=True)
class _Apps:
    """The apps and what asking their servers takes, as the wiring built them."""

    definitions: Mapping[str, AppDefinition]
    registry: Schedulers
    servers: httpx.AsyncClient


async def _apps(definitions: AppsDep, registry: RegistryDep, servers: AppServersDep) -> _Apps:
    return _Apps(definitions, registry, servers)


async def _refreshed(session: AsyncSession, actor: Actor, apps: _Apps) -> list[Any]:
    """The actor's sessions, each starting one asked once whether its server answers."""
    rows = await own_sessions(session, actor)
    await service.refresh_all(session, actor, rows, apps.definitions, apps.registry, apps.servers)
    now = utc_now()
    asked = await ends_asked(session, actor, rows)
    return [describe(row, apps.definitions, now, asked) for row in rows]


def _refresh_trigger(states: set[str]) -> str | None:
    if states & {"queued", "starting", "ending"}:
        return REFRESH_WAITING
    return REFRESH_RUNNING if "running" in states else None


async def _apps_page(
    request: Request,
    session: AsyncSession,
    actor: Actor,
    web: WebContext,
    apps: _Apps,
    block: str | None,
) -> Response:
    views = await _refreshed(session, actor, apps)
    context = {
        "apps": sorted(apps.definitions.values(), key=lambda a: a.title),
        "sessions": views,
        "poll_trigger": _refresh_trigger(
            {"ending" if view.is_ending else view.state for view in views}
        ),
        "describe_app": describe_app,
    }
    if block is None:
        context |= await sharing_context(session, actor, apps.definitions)
    return page(request, web, "apps/index.html", context, block=block)


@router.get("/apps", name="apps")
async def apps_page(
    request: Request,
    session: SessionDep,
    actor: CurrentUser,
    web: WebContextDep,
    apps: Annotated[_Apps, Depends(_apps)],
) -> Response:
    block = "app_sessions" if request.query_params.get("fragment") == "sessions" else None
    return await _apps_page(request, session, actor, web, apps, block)


async def _form_page(
    request: Request,
    session: AsyncSession,
    web: WebContext,
    actor: Actor,
    definition: AppDefinition,
    values: dict[str, Any],
    errors: dict[str, str] | None = None,
    status_code: int = 200,
) -> Response:
    context = {
        "app": definition,
        "projects": await actor_projects(session, actor),
        "values": values,
        "errors": errors or {},
        "describe_app": describe_app,
    }
    return page(request, web, "apps/launch.html", context, status_code=status_code)


def _initial(definition: AppDefinition, form: LaunchForm | None) -> dict[str, Any]:
    filled = (form or LaunchForm(project_id=0)).with_defaults(definition)
    values = {name: getattr(filled, name) for name in (*NUMBERS, *TEXTS)}
    values["project_id"] = filled.project_id or ""
    return {key: "" if value is None else value for key, value in values.items()}


@router.get("/apps/{app_name}", name="app_launch")
async def launch_form(
    request: Request,
    session: SessionDep,
    actor: CurrentUser,
    web: WebContextDep,
    definitions: AppsDep,
    app_name: str,
    relaunch: int | None = None,
) -> Response:
    definition = _definition(definitions, app_name)
    earlier = None
    if relaunch is not None:
        earlier = relaunch_form(await own_session(session, actor, relaunch))
    return await _form_page(request, session, web, actor, definition, _initial(definition, earlier))


def _read_form(form: FormData) -> tuple[LaunchForm | None, dict[str, Any], dict[str, str]]:
    values = {name: str(form.get(name, "")).strip() for name in ("project_id", *NUMBERS, *TEXTS)}
    errors: dict[str, str] = {}
    numbers: dict[str, int | None] = {}
    for name in ("project_id", *NUMBERS):
        raw = values[name]
        if raw and not raw.isdigit():
            errors[name] = _("enter a whole number")
        numbers[name] = int(raw) if raw.isdigit() else None
    if numbers["project_id"] is None:
        errors.setdefault("project_id", _("choose the project to charge"))
    if errors:
        return None, values, errors
    texts = {name: values[name] for name in TEXTS}
    launch = LaunchForm(
        project_id=numbers.pop("project_id") or 0,
        partition=texts["partition"] or None,
        work_dir=texts["work_dir"] or None,
        modules=texts["modules"],
        venv=texts["venv"],
        **numbers,
    )
    return launch, values, errors


@router.post("/apps/{app_name}", name="app_launch_post")
async def launch(
    request: Request,
    session: SessionDep,
    actor: CurrentUser,
    web: WebContextDep,
    definitions: AppsDep,
    clusters: ClustersDep,
    registry: RegistryDep,
    jobs: JobServiceDep,
    app_name: str,
) -> Response:
    definition = _definition(definitions, app_name)
    form, values, errors = _read_form(await request.form())
    try:
        if form is None:
            raise ValidationFailed(_("Some values are not valid."), fields=errors)
        home = await service.home_for(session, actor, form.project_id, clusters, registry)
        await service.launch(
            session, actor, jobs, definition, form, home, origin=web_origin(request)
        )
    except ValidationFailed as error:
        shown = dict(error.fields or {}) or {"form": error.detail}
        return await _form_page(
            request, session, web, actor, definition, values, shown, status_code=422
        )
    return redirect(request, str(request.url_for("apps")))


@router.post("/apps/sessions/{session_id:int}/end", name="app_session_end")
async def end_session(
    request: Request,
    sessionmaker: SessionmakerDep,
    actor: CurrentUser,
    jobs: JobServiceDep,
    session_id: PathId,
) -> Response:
    await service.end_own(sessionmaker, jobs, actor, session_id, origin=web_origin(request))
    return redirect(request, str(request.url_for("apps")))


@router.post("/apps/sessions/{session_id:int}/keep", name="app_session_keep")
async def keep_session(
    request: Request,
    session: SessionDep,
    actor: CurrentUser,
    web: WebContextDep,
    apps: Annotated[_Apps, Depends(_apps)],
    session_id: PathId,
) -> Response:
    """ "Keep it": the idle clock starts again; htmx gets the sessions list back."""
    await service.keep(session, actor, session_id, utc_now())
    if not is_htmx(request):
        return redirect(request, str(request.url_for("apps")))
    return await _apps_page(request, session, actor, web, apps, "app_sessions")
