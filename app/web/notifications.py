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
from app.jobs.service import own_job_with_slurm_id
from app.notifications import browser, wording
from app.notifications import service as notifications
from app.notifications.events import describe, happened
from app.notifications.messages import state_words
from app.params import PathId
from app.users.actor import Actor
from app.vocabulary.notify import NOTIFY_EVENTS, NotifyEvent
from app.web.auth import CurrentUser, WebContext, WebContextDep, csrf_protected_router
from app.web.tokens import NO_STORE
from app.web.views import page, redirect

router = csrf_protected_router()


def _event_choices(
    events: tuple[str, ...] = NOTIFY_EVENTS, *, one_job: bool = False
) -> list[tuple[str, str]]:
    # Allocation warnings are about the projects one manages, never about one job.
    events = tuple(e for e in events if not (one_job and e == NotifyEvent.ALLOCATION))
    return [(event, describe(event)) for event in events]


def _read_form(form: FormData, job_id: int | None) -> dict[str, Any]:
    scope = str(form.get("scope", "all"))
    raw_job = str(form.get("job_id", "")).strip()[:32]
    return {
        "event": str(form.get("event", "ended")),
        "channel": str(form.get("channel", "browser")),
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


def _form_defaults(job_id: int | None, delivery: notifications.Delivery) -> dict[str, Any]:
    # E-mail where the site sends it; otherwise the browser, which needs nothing set up.
    # Never a webhook: it needs a service of the user's own to receive it.
    return {
        "event": "ended",
        "channel": "email" if delivery.has_email else "browser",
        "webhook_url": "",
        "scope": "all",
        "job_id": job_id,
        "raw_job": "",
    }


async def _delivery_log(session: SessionDep, actor: Actor, log_page: int) -> dict[str, Any]:
    """One page of the delivery log, newest first, and links to the pages beside it."""
    size = notifications.LOG_LENGTH
    found = await notifications.list_attempts(
        session, actor, limit=size + 1, offset=(log_page - 1) * size
    )
    link = "/settings/notifications?log_page=%d#log-heading"
    return {
        "attempts": found[:size],
        "log_newer": link % (log_page - 1) if log_page > 1 else None,
        "log_older": link % (log_page + 1) if len(found) > size else None,
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
    log_page: int = 1,
) -> Response:
    delivery = notifications.Delivery.of(settings)
    context: dict[str, Any] = {
        "rules": await notifications.list_rules(session, actor, job_id=job_id),
        "events": _event_choices(one_job=job_id is not None),
        "describe": describe,
        "happened": happened,
        "shown_error": wording.shown,
        "has_email": delivery.has_email,
        "allow_private_webhooks": delivery.allow_private_webhooks,
        "own_email": await notifications.own_email(session, actor),
        "form": _form_defaults(job_id, delivery),
        "errors": {},
        "created": None,
    }
    if job_id is None:
        context.update(await _delivery_log(session, actor, log_page))
        name = "notifications/index.html"
    else:
        job = await get_visible_job(session, actor, job_id)
        context["job"] = job
        context["events"] = _event_choices(notifications.events_still_possible(job), one_job=True)
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
        if values["job_id"] is None and values["scope"] == "job":
            # People know a job by Slurm's id (905, 905_2), not by the portal's row number.
            found = await own_job_with_slurm_id(session, actor, values["raw_job"])
            if found is None:
                raise ValidationFailed(
                    fields={"job_id": _("Give the Slurm id of one of your jobs, e.g. 905.")}
                )
            values["job_id"] = found
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
    log_page: Annotated[int, Query(ge=1, le=10_000)] = 1,
) -> Response:
    return await _render(request, session, web, actor, settings, log_page=log_page)


@router.post("/settings/notifications")
async def create_rule(
    request: Request,
    session: SessionDep,
    web: WebContextDep,
    actor: CurrentUser,
    settings: SettingsDep,
) -> Response:
    return await _create(request, session, web, actor, settings, None)


@router.post("/settings/notifications/{rule_id:int}/delete", name="notification_rule_delete")
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
