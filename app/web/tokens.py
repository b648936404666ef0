"""/settings/tokens: personal access tokens for the API and the command-line client.

The secret of a new token is in the answer to the creating POST and nowhere else: it is
never stored, so the page cannot show it again.
"""

from __future__ import annotations

from typing import Any

from fastapi import Request
from fastapi.responses import Response
from starlette.datastructures import FormData

from app.deps import SessionDep
from app.errors import NotFound, ValidationFailed
from app.i18n import _
from app.params import PathId
from app.tokens import service as tokens
from app.tokens.scopes import ADMIN, READ, SUBMIT, grantable_scopes
from app.users.actor import Actor
from app.web.auth import (
    CurrentUser,
    WebContext,
    WebContextDep,
    csrf_protected_router,
    web_origin,
)
from app.web.views import page, redirect

router = csrf_protected_router()
DEFAULT_LIFETIME_DAYS = 90
# Secrets must not linger in shared or back/forward caches.
NO_STORE = {"Cache-Control": "no-store"}


def _scope_help() -> dict[str, str]:
    return {
        READ: _("See your projects, templates, jobs and their output."),
        SUBMIT: _("Also submit, cancel, hold and release jobs and edit templates."),
        ADMIN: _("Act with your site-administrator powers."),
    }


def _form_defaults() -> dict[str, Any]:
    return {"name": "", "scopes": [READ], "expires_in_days": str(DEFAULT_LIFETIME_DAYS)}


async def _tokens_page(
    request: Request,
    session: SessionDep,
    web: WebContext,
    actor: Actor,
    *,
    form: dict[str, Any] | None = None,
    created: tokens.CreatedToken | None = None,
    errors: dict[str, str] | None = None,
    status_code: int = 200,
) -> Response:
    context = {
        "tokens": await tokens.list_tokens(session, actor),
        "grantable": grantable_scopes(actor.is_site_admin),
        "scope_help": _scope_help(),
        "max_days": tokens.MAX_LIFETIME_DAYS,
        "form": form or _form_defaults(),
        "created": created,
        "errors": errors or {},
    }
    response = page(request, web, "tokens/index.html", context, status_code=status_code)
    response.headers.update(NO_STORE)
    return response


@router.get("/settings/tokens", name="tokens")
async def tokens_page(
    request: Request, session: SessionDep, web: WebContextDep, actor: CurrentUser
) -> Response:
    return await _tokens_page(request, session, web, actor)


def _parse_lifetime(raw: str) -> int | str:
    """Days as an int, or the raw text when it is not a whole number (reported as invalid)."""
    text = raw.strip()
    return int(text) if text.isdigit() else text


def _read_form(form: FormData) -> dict[str, Any]:
    return {
        "name": str(form.get("name", "")),
        "scopes": [str(scope) for scope in form.getlist("scopes")],
        "expires_in_days": str(form.get("expires_in_days", "")),
    }


@router.post("/settings/tokens")
async def create_token(
    request: Request, session: SessionDep, web: WebContextDep, actor: CurrentUser
) -> Response:
    values = _read_form(await request.form())
    lifetime = _parse_lifetime(values["expires_in_days"])
    if isinstance(lifetime, str):
        problems = {"expires_in_days": tokens.lifetime_problem()}
        return await _tokens_page(
            request, session, web, actor, form=values, errors=problems, status_code=422
        )
    try:
        created = await tokens.create_token(
            session,
            actor,
            name=values["name"],
            scopes=values["scopes"],
            lifetime_days=lifetime,
            origin=web_origin(request),
        )
    except ValidationFailed as error:
        return await _tokens_page(
            request, session, web, actor, form=values, errors=dict(error.fields), status_code=422
        )
    return await _tokens_page(request, session, web, actor, created=created, status_code=201)


@router.get("/settings/tokens/{token_id:int}/revoke", name="token_revoke")
async def revoke_confirmation(
    request: Request, session: SessionDep, web: WebContextDep, actor: CurrentUser, token_id: PathId
) -> Response:
    found = [t for t in await tokens.list_tokens(session, actor) if t.id == token_id]
    if not found:
        raise NotFound(_("No such token."))
    return page(request, web, "tokens/revoke.html", {"token": found[0]})


@router.post("/settings/tokens/{token_id:int}/revoke")
async def revoke(
    request: Request, session: SessionDep, actor: CurrentUser, token_id: PathId
) -> Response:
    await tokens.revoke_token(session, actor, token_id, origin=web_origin(request))
    return redirect(request, "/settings/tokens")
