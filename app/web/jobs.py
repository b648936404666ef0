"""Job history and job detail pages, the fragments that refresh them, and job actions.

A page and the fragment that refreshes it are the same template: the fragment routes render
only its named block. A block polls itself while anything in it can still change and is
re-rendered without ``hx-trigger`` once everything in it has ended, which stops the polling.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import date
from typing import Annotated, Any, Literal, get_args

from fastapi import APIRouter, Depends, Form, Query, Request
from fastapi.responses import RedirectResponse, Response
from sqlalchemy.ext.asyncio import AsyncSession

from app.deps import ClusterNamesDep, JobServiceDep, RegistryDep, SessionDep
from app.errors import ValidationFailed
from app.i18n import _
from app.job_templates.values import format_duration, format_memory, parse_duration, parse_memory
from app.jobs import service as jobs
from app.jobs.service import script_digest
from app.models.jobs import JOB_STATES
from app.params import MAX_ID, BadCursor, PathId, decode_cursor, encode_cursor
from app.scheduler.errors import SchedulerError
from app.scheduler.registry import Schedulers
from app.templating import is_htmx
from app.users.actor import Actor
from app.vocabulary.days import is_plausible_day
from app.web import jobs_fragments as view
from app.web.auth import CurrentUser, WebContextDep, csrf_protected_router, web_origin
from app.web.dashboard import HistoryFilters, filter_choices, history_page
from app.web.job_detail import POLL_EVERY, detail_context
from app.web.views import page, redirect

ActionName = Literal["cancel", "hold", "release"]

router = APIRouter(include_in_schema=False)
actions = csrf_protected_router()


def _parse_filters(
    state: str | None = None,
    project: str | None = None,
    cluster: str | None = None,
    template: str | None = None,
    since: str | None = None,
    until: str | None = None,
    q: str | None = None,
    whose: str | None = None,
) -> HistoryFilters:
    # Empty form fields arrive as "", which means "any" rather than an error.
    def number(value: str | None) -> int | None:
        is_id = value and value.isdigit() and len(value) <= 10 and int(value) <= MAX_ID
        return int(value) if value and is_id else None

    def day(value: str | None) -> date | None:
        try:
            parsed = date.fromisoformat(value) if value else None
        except ValueError:
            return None
        return parsed if parsed is None or is_plausible_day(parsed) else None

    return HistoryFilters(
        state=state if state in JOB_STATES else None,
        project_id=number(project),
        cluster=cluster or None,
        template_id=number(template),
        since=day(since),
        until=day(until),
        text=(q or "")[:200],
        # "Mine" unless the whole of the user's projects is asked for.
        mine_only=whose != "projects",
    )


FiltersDep = Annotated[HistoryFilters, Depends(_parse_filters)]
CursorDep = Annotated[str | None, Query(max_length=64)]


def _below(cursor: str | None) -> int | None:
    try:
        return decode_cursor(cursor)
    except BadCursor:
        raise ValidationFailed(fields={"cursor": _("is not a page of this list")}) from None


async def _history_context(
    session: AsyncSession, actor: Actor, filters: HistoryFilters, cursor: str | None
) -> dict[str, Any]:
    rows, next_before = await history_page(session, actor, filters, _below(cursor))
    query = filters.query_string()
    this_page = f"cursor={cursor}" if cursor else ""
    next_page = f"cursor={encode_cursor(next_before)}" if next_before else ""
    return {
        "rows": rows,
        "filters": filters,
        "next_url": f"/jobs?{'&'.join(p for p in (query, next_page) if p)}"
        if next_before
        else None,
        "refresh_url": f"/jobs/rows?{'&'.join(p for p in (query, this_page) if p)}",
        "polls": any(not row.badge.is_terminal for row in rows),
        "poll_trigger": POLL_EVERY,
        "is_paged": bool(cursor),
        "first_url": f"/jobs?{query}" if query else "/jobs",
    }


@router.get("/jobs", name="job_history")
async def job_history(
    request: Request,
    session: SessionDep,
    actor: CurrentUser,
    web: WebContextDep,
    filters: FiltersDep,
    names: ClusterNamesDep,
    cursor: CursorDep = None,
) -> Response:
    context = await _history_context(session, actor, filters, cursor)
    context.update(await filter_choices(session, actor), clusters=names)
    return page(request, web, "jobs/list.html", context)


@router.get("/jobs/rows", name="job_history_rows")
async def job_history_rows(
    request: Request,
    session: SessionDep,
    actor: CurrentUser,
    web: WebContextDep,
    filters: FiltersDep,
    cursor: CursorDep = None,
) -> Response:
    context = await _history_context(session, actor, filters, cursor)
    response = page(request, web, "jobs/list.html", context, block="results")
    if request.headers.get("HX-Trigger") == "job-filters":
        # The address bar shows the filtered page, so it can be bookmarked and shared.
        query = filters.query_string()
        response.headers["HX-Push-Url"] = f"/jobs?{query}" if query else "/jobs"
    return response


# --- job detail and actions --------------------------------------------------------------


async def _partition_max_minutes(registry: Schedulers, job: Any) -> int | None:
    try:
        partitions = await registry.get(job.cluster).partitions()
    except SchedulerError:
        return None
    chosen = next(
        (p for p in partitions if p.name == job.partition or (not job.partition and p.is_default)),
        None,
    )
    if chosen is None or chosen.max_time is None:
        return None
    return int(chosen.max_time.total_seconds()) // 60


def _resubmit_values(job: Any, suggestion: view.Suggestion | None) -> dict[str, str]:
    values = {
        "name": job.name,
        "time_limit": format_duration(job.time_limit_minutes) if job.time_limit_minutes else "",
        "memory": format_memory(job.memory_mb) if job.memory_mb else "",
        "cpus": str(job.cpus or ""),
    }
    if suggestion is not None and suggestion.field == "memory_mb":
        values["memory"] = format_memory(suggestion.value)
    if suggestion is not None and suggestion.field == "time_limit_minutes":
        values["time_limit"] = format_duration(suggestion.value)
    return values


@router.get("/jobs/{job_id:int}/resubmit", name="job_resubmit_form")
async def resubmit_form(
    request: Request,
    session: SessionDep,
    actor: CurrentUser,
    web: WebContextDep,
    job_id: PathId,
    registry: RegistryDep,
) -> Response:
    """A submit form pre-filled from the job; more memory or time if that is what it lacked."""
    job = await jobs.get_job(session, actor, job_id)
    limit = await _partition_max_minutes(registry, job)
    suggestion = view.more_resources(job, limit)
    context = {
        "job": job,
        "suggestion": suggestion,
        "values": _resubmit_values(job, suggestion),
        "errors": {},
        "csrf_token": web.csrf_token,
        **_script_review(job, actor),
    }
    return page(request, web, "jobs/resubmit.html", context)


def _script_review(job: Any, actor: Actor) -> dict[str, Any]:
    """What the resubmit page shows of the script that will run as the actor."""
    return {
        "script": job.script,
        "environment": sorted((job.environment or {}).items()),
        "is_own": job.owner_user_id == actor.user_id,
        "script_digest": script_digest(job),
    }


def _edits(name: str, time_limit: str, memory: str, cpus: str) -> dict[str, Any]:
    edits: dict[str, Any] = {"name": name.strip()}
    errors: dict[str, str] = {}
    parsers: dict[str, tuple[str, str, Any]] = {
        "time_limit": ("time_limit_minutes", time_limit, parse_duration),
        "memory": ("memory_mb", memory, parse_memory),
        "cpus": ("cpus_per_task", cpus, int),
    }
    for field, (target, raw, parse) in parsers.items():
        if not raw.strip():
            continue
        try:
            edits[target] = parse(raw.strip())
        except ValueError as error:
            errors[field] = str(error) if field != "cpus" else _("enter a whole number")
    if errors:
        raise ValidationFailed(_("Some values are not valid."), fields=errors)
    return edits


@actions.post("/jobs/{job_id:int}/resubmit", name="job_resubmit")
async def resubmit(
    request: Request,
    session: SessionDep,
    actor: CurrentUser,
    web: WebContextDep,
    service: JobServiceDep,
    job_id: PathId,
    name: Annotated[str, Form(max_length=200)],
    time_limit: Annotated[str, Form(max_length=32)] = "",
    memory: Annotated[str, Form(max_length=32)] = "",
    cpus: Annotated[str, Form(max_length=8)] = "",
    reviewed: Annotated[str, Form(alias="script_digest", max_length=64)] = "",
) -> Response:
    job = await jobs.get_job(session, actor, job_id)
    try:
        edits = _edits(name, time_limit, memory, cpus)
        new_job = await service.resubmit(
            actor, job_id, edits, origin=web_origin(request), reviewed_script=reviewed
        )
    except ValidationFailed as error:
        values = {"name": name, "time_limit": time_limit, "memory": memory, "cpus": cpus}
        context = {
            "job": job,
            "suggestion": None,
            "values": values,
            "errors": error.fields or {"submission": error.detail},
            "csrf_token": web.csrf_token,
            **_script_review(job, actor),
        }
        return page(request, web, "jobs/resubmit.html", context, status_code=422)
    return redirect(request, f"/jobs/{new_job.id}")


def _confirmation(action: ActionName, name: str) -> dict[str, str]:
    """What the page asking to confirm ``action`` on the job ``name`` says."""
    if action == "cancel":
        return {
            "title": _("Cancel job"),
            "question": _("Cancel job: %(name)s?", name=name),
            "consequence": _("The job stops and cannot be resumed."),
            "confirm_label": _("Yes, cancel job"),
        }
    if action == "hold":
        return {
            "title": _("Hold job"),
            "question": _("Hold job: %(name)s?", name=name),
            "consequence": _("The job stays in the queue but will not start until released."),
            "confirm_label": _("Yes, hold job"),
        }
    return {
        "title": _("Release job"),
        "question": _("Release job: %(name)s?", name=name),
        "consequence": _("The job may start as soon as resources allow."),
        "confirm_label": _("Yes, release job"),
    }


def _confirmation_page(action: ActionName) -> Callable[..., Awaitable[Response]]:
    async def confirm_action(
        request: Request,
        session: SessionDep,
        actor: CurrentUser,
        web: WebContextDep,
        job_id: PathId,
    ) -> Response:
        context = await detail_context(session, actor, job_id, web.csrf_token)
        context.update(action=action, **_confirmation(action, context["job"].name))
        return page(request, web, "jobs/confirm.html", context)

    return confirm_action


def _action(action: ActionName) -> Callable[..., Awaitable[Response]]:
    async def run_action(
        request: Request,
        session: SessionDep,
        actor: CurrentUser,
        web: WebContextDep,
        service: JobServiceDep,
        registry: RegistryDep,
        job_id: PathId,
    ) -> Response:
        """Ask the cluster; the new state shows up once the poller has seen Slurm's answer."""
        await getattr(service, action)(actor, job_id, origin=web_origin(request))
        if not is_htmx(request):
            return RedirectResponse(f"/jobs/{job_id}?done={action}", status_code=303)
        context = await detail_context(session, actor, job_id, web.csrf_token)
        context["notice"] = _done(action)
        context["partition_label"] = view.partition_label(registry, context["job"].cluster)
        return page(request, web, "jobs/detail.html", context, block="job_status")

    return run_action


# One explicit route per action: no catch-all "/jobs/{id}/{action}" that later routes must
# be registered before.
for _name in get_args(ActionName):
    _path = f"/jobs/{{job_id:int}}/{_name}"
    router.add_api_route(_path, _confirmation_page(_name), name=f"job_{_name}_confirm")
    actions.add_api_route(_path, _action(_name), methods=["POST"], name=f"job_{_name}")


def _done(action: ActionName) -> str:
    if action == "cancel":
        return _("Cancellation requested. The state changes as soon as the cluster confirms.")
    if action == "hold":
        return _("Hold requested.")
    return _("Release requested.")
