"""/admin/audit: the audit trail with filters and CSV export; /admin/import from Slurm."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import date
from typing import Annotated
from urllib.parse import urlencode

from fastapi import Form, Query, Request
from fastapi.responses import Response

from app.admin import importer
from app.admin.associations import SlurmState, fetch_slurm_state
from app.audit import service as audit
from app.deps import ClustersDep, SessionDep
from app.errors import ValidationFailed
from app.i18n import _
from app.models.audit import AUDIT_SURFACES
from app.params import MAX_ID
from app.scheduler.config import ClusterConfig
from app.scheduler.registry import build_adapter
from app.templating import render
from app.vocabulary.days import FIRST_DAY, LAST_DAY
from app.web.admin_common import SiteAdmin, page_context, web_origin
from app.web.auth import WebContextDep, csrf_protected_router

router = csrf_protected_router(prefix="/admin")
Text = Annotated[str | None, Query()]
# Beyond these the day-after arithmetic of the filter overflows.
Day = Annotated[date | None, Query(ge=FIRST_DAY, le=LAST_DAY)]
EventId = Annotated[int | None, Query(ge=0, le=MAX_ID)]


def _filter_query(wanted: audit.AuditFilter) -> str:
    """The filters as a query string, carried by the CSV and the page links."""
    pairs = {
        "login": wanted.actor_login,
        "action": wanted.action,
        "surface": wanted.surface,
        "since": wanted.since,
        "until": wanted.until,
    }
    return urlencode({key: value for key, value in pairs.items() if value})


def _page_links(base: str, filters: str, found: audit.AuditPage) -> dict[str, str | None]:
    def link(cursor: str, event_id: int | None) -> str | None:
        if event_id is None:
            return None
        return f"{base}?{'&'.join(p for p in (filters, f'{cursor}={event_id}') if p)}"

    return {
        "older_url": link("before", found.older_than),
        "newer_url": link("after", found.newer_than),
    }


@router.get("/audit", name="admin_audit")
async def audit_page(
    request: Request,
    actor: SiteAdmin,
    web: WebContextDep,
    session: SessionDep,
    login: Text = None,
    action: Text = None,
    surface: Text = None,
    since: Day = None,
    until: Day = None,
    format: Text = None,
    before: EventId = None,
    after: EventId = None,
) -> Response:
    wanted = audit.AuditFilter(login or None, action or None, surface or None, since, until)
    if format == "csv":
        rows = await audit.search(session, actor, wanted, limit=audit.CSV_LIMIT)
        headers = {"Content-Disposition": 'attachment; filename="audit.csv"'}
        return Response(audit.to_csv(rows), media_type="text/csv", headers=headers)
    found = await audit.page(session, actor, wanted, before_id=before, after_id=after)
    actions = await audit.known_actions(session, actor)
    query = _filter_query(wanted)
    base = str(request.url_for("admin_audit").path)
    context = page_context(
        web,
        rows=found.rows,
        filters=wanted,
        surfaces=AUDIT_SURFACES,
        surface_label=audit.surface_label,
        actions=actions,
        query=query,
        page_size=audit.PAGE_SIZE,
        is_paged=before is not None or after is not None,
        first_url=f"{base}?{query}" if query else base,
        **_page_links(base, query, found),
    )
    return render(request, "admin/audit.html", context)


def _cluster(clusters: Mapping[str, ClusterConfig], name: str) -> ClusterConfig:
    if name not in clusters:
        raise ValidationFailed(fields={"cluster": _("unknown cluster")})
    return clusters[name]


async def _slurm_state(config: ClusterConfig, cluster: str) -> SlurmState:
    adapter = build_adapter(config)
    try:
        return await fetch_slurm_state(adapter, cluster)
    finally:
        await adapter.close()


@router.get("/import", name="admin_import")
async def import_page(
    request: Request, actor: SiteAdmin, web: WebContextDep, clusters: ClustersDep
) -> Response:
    context = page_context(web, clusters=sorted(clusters), differences=None, cluster=None)
    return render(request, "admin/import.html", context)


@router.post("/import/preview", name="admin_import_preview")
async def import_preview(
    request: Request,
    actor: SiteAdmin,
    web: WebContextDep,
    session: SessionDep,
    clusters: ClustersDep,
    cluster: Annotated[str, Form()],
) -> Response:
    state = await _slurm_state(_cluster(clusters, cluster), cluster)
    differences = await importer.preview(session, actor, cluster, state)
    context = page_context(
        web, clusters=sorted(clusters), differences=differences, cluster=cluster, applied=None
    )
    return render(request, "admin/import.html", context)


@router.post("/import/apply", name="admin_import_apply")
async def import_apply(
    request: Request,
    actor: SiteAdmin,
    web: WebContextDep,
    session: SessionDep,
    clusters: ClustersDep,
    cluster: Annotated[str, Form()],
    confirm: Annotated[list[str] | None, Form()] = None,
) -> Response:
    state = await _slurm_state(_cluster(clusters, cluster), cluster)
    origin = web_origin(request)
    applied = await importer.apply(session, actor, origin, cluster, state, confirm or [])
    differences = await importer.preview(session, actor, cluster, state)
    context = page_context(
        web, clusters=sorted(clusters), differences=differences, cluster=cluster, applied=applied
    )
    return render(request, "admin/import.html", context)
