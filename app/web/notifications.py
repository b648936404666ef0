"""/settings/notifications, a job's "Notify me" page and the browser notifications feed.

A webhook's signing secret is in the answer to the creating POST and shown then only, like
an API token's.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Query, Request
from fastapi.responses import JSONResponse, Response
from starlette.datastructures import FormData

from app import i18n
from app.deps import SessionDep, SettingsDep
from app.errors import ValidationFailed
from app.i18n import _
from app.jobs.authz import get_visible_job
from app.notifications import browser, wording
from app.notifications import service as notifications
from app.notifications.events import NOTIFY_EVENTS, describe, happened
from app.notifications.messages import state_words
from app.params import MAX_ID, PathId
from app.users.actor import Actor
from app.web.auth import CurrentUser, WebContext, WebContextDep, csrf_protected_router
from app.web.tokens import NO_STORE
from app.web.views import page, redirect

router = csrf_protected_router()


def _event_choices() -> list[tuple[str, str]]:
    return [(event, describe(event)) for event in NOTIFY_EVENTS]


def _read_form(form: FormData, job_id: int | None) -> dict[str, Any]:
    scope = str(form.get("scope", "all"))
    raw_job = str(form.get("job_id", "")).strip()
    if job_id is None and scope == "job" and raw_job.isdigit() and int(raw_job) <= MAX_ID:
        job_id = int(raw_job)
    return {
        "event": str(form.get("event", "ended")),
        "channel": str(form.get("channel", "email")),
        "webhook_url": str(form.get("webhook_url", "")).strip(),
        "scope": scope,
        "job_id": job_id,
        "raw_job": raw_job,
    }


def _draft(values: dict[str, Any]) -> notifications.RuleDraft:
    return notifications.RuleDraft(
        event=values["event"],
        channel=values["channel"],
        job_id=values["job_id"],
        webhook_url=values["webhook_url"] or None,
    )


def _form_defaults(job_id: int | None = None) -> dict[str, Any]:
    return {
        "event": "ended",
        "channel": "email",
        "webhook_url": "",
        "scope": "all",
        "job_id": job_id,
        "raw_job": "",
    }


async def _render(
    request: Request,
    session: SessionDep,
    web: WebContext,
    actor: Actor,
    settings: SettingsDep,
    *,
    job_id: int | None = None,
    extra: dict[str, Any] | None = None,
    status_code: int = 200,
) -> Response:
    context: dict[str, Any] = {
        "rules": await notifications.list_rules(session, actor, job_id=job_id),
        "events": _event_choices(),
        "describe": describe,
        "happened": happened,
        "shown_error": wording.shown,
        "has_email": bool(settings.smtp_host),
        "form": _form_defaults(job_id),
        "errors": {},
        "created": None,
    }
    if job_id is None:
        context["attempts"] = await notifications.list_attempts(session, actor)
        name = "notifications/index.html"
    else:
        context["job"] = await get_visible_job(session, actor, job_id)
        name = "notifications/job.html"
    context.update(extra or {})
    response = page(request, web, name, context, status_code=status_code)
    response.headers.update(NO_STORE)
    return response


async def _create(
    request: Request,
    session: SessionDep,
    web: WebContext,
    actor: Actor,
    settings: SettingsDep,
    job_id: int | None,
) -> Response:
    values = _read_form(await request.form(), job_id)
    try:
        if values["scope"] == "job" and values["job_id"] is None:
            raise ValidationFailed(fields={"job_id": _("Give the number of one of your jobs.")})
        created = await notifications.create_rule(
            session, actor, _draft(values), notifications.Delivery.of(settings)
        )
    except ValidationFailed as error:
        problems = dict(error.fields) or {"form": error.detail}
        extra: dict[str, Any] = {"form": values, "errors": problems}
        return await _render(
            request, session, web, actor, settings, job_id=job_id, extra=extra, status_code=422
        )
    shown: dict[str, Any] = {"created": created}
    return await _render(
        request, session, web, actor, settings, job_id=job_id, extra=shown, status_code=201
    )


@router.get("/settings/notifications", name="notifications")
async def notifications_page(
    request: Request,
    session: SessionDep,
    web: WebContextDep,
    actor: CurrentUser,
    settings: SettingsDep,
) -> Response:
    return await _render(request, session, web, actor, settings)


@router.post("/settings/notifications")
async def create_rule(
    request: Request,
    session: SessionDep,
    web: WebContextDep,
    actor: CurrentUser,
    settings: SettingsDep,
) -> Response:
    return await _create(request, session, web, actor, settings, None)


@router.post("/settings/notifications/{rule_id}/delete", name="notification_rule_delete")
async def delete_rule(
    request: Request, session: SessionDep, actor: CurrentUser, rule_id: PathId
) -> Response:
    await notifications.delete_rule(session, actor, rule_id)
    back = request.query_params.get("job")
    target = f"/jobs/{int(back)}/notify" if back and back.isdigit() else "/settings/notifications"
    return redirect(request, target)


@router.get("/jobs/{job_id:int}/notify", name="job_notify")
async def job_notify_page(
    request: Request,
    session: SessionDep,
    web: WebContextDep,
    actor: CurrentUser,
    settings: SettingsDep,
    job_id: PathId,
) -> Response:
    return await _render(request, session, web, actor, settings, job_id=job_id)


@router.post("/jobs/{job_id:int}/notify")
async def job_notify(
    request: Request,
    session: SessionDep,
    web: WebContextDep,
    actor: CurrentUser,
    settings: SettingsDep,
    job_id: PathId,
) -> Response:
    return await _create(request, session, web, actor, settings, job_id)


def _notice(change: browser.Change) -> dict[str, str]:
    """What the browser's notification says of ``change``, in the reader's language."""
    state = state_words(change.state)
    title = _("Job %(name)s is %(state)s", name=change.name, state=state)
    if change.slurm_job_id:
        body = _(
            "Job %(name)s (Slurm %(slurm_id)s) is now %(state)s.",
            name=change.name,
            slurm_id=change.slurm_job_id,
            state=state,
        )
    else:
        body = _("Job %(name)s is now %(state)s.", name=change.name, state=state)
    return {"title": title, "body": body}


@router.get("/notifications/feed", name="notifications_feed")
async def feed(
    session: SessionDep,
    actor: CurrentUser,
    after: Annotated[int | None, Query(ge=0, le=2**62)] = None,
) -> Response:
    """JSON for static/js/notify.js: where the feed stands, what came after ``after``, and
    ``notices``, what to say of each change (in the same order)."""
    if after is None:
        return JSONResponse({"cursor": await browser.feed_position(session, actor), "changes": []})
    i18n.set_locale(actor.locale)
    changes = await browser.changes_after(session, actor, after)
    cursor = changes[-1].event_id if changes else after
    items = [
        {"job_id": c.job_id, "name": c.name, "slurm_job_id": c.slurm_job_id, "state": c.state}
        for c in changes
    ]
    notices = [_notice(change) for change in changes]
    body = {"cursor": cursor, "changes": items, "notices": notices}
    return JSONResponse(body, headers=NO_STORE)
