"""What every /admin and /usage page needs: the guard, the audit origin and page context."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Depends

from app.errors import Forbidden
from app.i18n import _
from app.users.actor import Actor
from app.web.auth import CurrentUser, WebContextDep
from app.web.auth import web_origin as web_origin


async def require_site_admin(actor: CurrentUser) -> Actor:
    if not actor.is_site_admin:
        raise Forbidden(_("This page is for site administrators."))
    return actor


SiteAdmin = Annotated[Actor, Depends(require_site_admin)]


def role_label(role: str) -> str:
    """A project role as the pages name it (the stored value stays the form's)."""
    return {"member": _("member"), "manager": _("manager")}.get(role, role)


def difference_label(kind: str) -> str:
    """How the import page names a difference between Slurm and the portal."""
    labels = {
        "project_missing": _("project missing"),
        "project_not_in_slurm": _("project not in slurm"),
        "member_missing": _("member missing"),
        "member_not_in_slurm": _("member not in slurm"),
        "role_differs": _("role differs"),
        "unknown_user": _("unknown user"),
    }
    return labels.get(kind, kind.replace("_", " "))


def page_context(web: WebContextDep, **values: Any) -> dict[str, Any]:
    labels = {"role_label": role_label, "difference_label": difference_label}
    return {"actor": web.actor, "csrf_token": web.csrf_token, **labels, **values}
