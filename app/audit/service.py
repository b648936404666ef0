"""Writing and reading the audit trail.

Only ``record`` writes: there is deliberately no way to change or delete an event from
the application, so the trail can be trusted to show what happened.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from typing import Any, TypeVar

from sqlalchemy import ColumnElement, Select, select
from sqlalchemy.ext.asyncio import AsyncSession

from app.errors import Forbidden, ValidationFailed
from app.i18n import _
from app.models.audit import AUDIT_SURFACES, AuditEvent
from app.models.base import utc_now
from app.models.users import User
from app.reports.csv_export import safe_cells
from app.users.actor import Actor

# What the audit page shows at once (the newest few); older and newer are a link away.
PAGE_SIZE = 20
_Q = TypeVar("_Q", bound=Select[*tuple[Any, ...]])
CSV_LIMIT = 100_000


async def record(
    session: AsyncSession,
    actor_user_id: int | None,
    surface: str,
    action: str,
    target_type: str | None = None,
    target_id: str | int | None = None,
    address: str | None = None,
    details: Mapping[str, Any] | None = None,
) -> AuditEvent:
    """Append one event in the caller's transaction, so it commits (or not) with the change."""
    if surface not in AUDIT_SURFACES:
        raise ValueError(f"unknown audit surface {surface!r}")
    event = AuditEvent(
        at=utc_now(),
        actor_user_id=actor_user_id,
        surface=surface,
        action=action,
        target_type=target_type,
        target_id=None if target_id is None else str(target_id),
        address=(address or None) and address[:45],
        details=dict(details or {}),
    )
    session.add(event)
    await session.flush()
    return event


@dataclass(frozen=True, slots=True)
class AuditFilter:
    actor_login: str | None = None
    action: str | None = None
    surface: str | None = None
    since: date | None = None
    until: date | None = None

    def checked(self) -> AuditFilter:
        if self.surface and self.surface not in AUDIT_SURFACES:
            raise ValidationFailed(fields={"surface": _("unknown surface")})
        if self.since and self.until and self.since > self.until:
            raise ValidationFailed(fields={"until": _("must not be before the start date")})
        return self


@dataclass(frozen=True, slots=True)
class AuditRow:
    id: int
    at: datetime
    actor_login: str | None
    surface: str
    action: str
    target_type: str | None
    target_id: str | None
    address: str | None
    details: Mapping[str, Any]


def _start_of(day: date) -> datetime:
    return datetime.combine(day, time.min).replace(tzinfo=utc_now().tzinfo)


def _filtered(query: _Q, wanted: AuditFilter) -> _Q:
    if wanted.actor_login:
        query = query.where(User.login == wanted.actor_login.strip())
    if wanted.action:
        query = query.where(AuditEvent.action == wanted.action.strip())
    if wanted.surface:
        query = query.where(AuditEvent.surface == wanted.surface)
    if wanted.since:
        query = query.where(AuditEvent.at >= _start_of(wanted.since))
    if wanted.until:
        query = query.where(AuditEvent.at < _start_of(wanted.until + timedelta(days=1)))
    return query


def _require_admin(actor: Actor) -> None:
    if not actor.is_site_admin:
        raise Forbidden(_("Only site administrators can read the audit trail."))


async def search(
    session: AsyncSession,
    actor: Actor,
    wanted: AuditFilter,
    *,
    limit: int = 100,
    before_id: int | None = None,
) -> list[AuditRow]:
    """Newest first; ``before_id`` continues a previous page."""
    _require_admin(actor)
    query = (
        select(AuditEvent, User.login)
        .outerjoin(User, User.id == AuditEvent.actor_user_id)
        .order_by(AuditEvent.id.desc())
        .limit(max(1, min(limit, CSV_LIMIT)))
    )
    query = _filtered(query, wanted.checked())
    if before_id is not None:
        query = query.where(AuditEvent.id < before_id)
    rows = (await session.execute(query)).all()
    return [_row(row[0], row[1]) for row in rows]


@dataclass(frozen=True, slots=True)
class AuditPage:
    """One page of events, newest first, and the ids the neighbouring pages start from."""

    rows: list[AuditRow]
    older_than: int | None
    """The next page holds the events below this id; None on the last page."""
    newer_than: int | None
    """The previous page holds the events above this id; None on the first page."""


def _events(wanted: AuditFilter) -> Select[AuditEvent, str]:
    query = select(AuditEvent, User.login).outerjoin(User, User.id == AuditEvent.actor_user_id)
    return _filtered(query, wanted.checked())


async def _fetch(
    session: AsyncSession, query: Select[AuditEvent, str], size: int
) -> list[AuditRow]:
    rows = (await session.execute(query.limit(size + 1))).all()
    return [_row(row[0], row[1]) for row in rows]


async def _exists(session: AsyncSession, wanted: AuditFilter, where: ColumnElement[bool]) -> bool:
    query = _events(wanted).where(where).limit(1)
    return (await session.execute(query)).first() is not None


async def page(
    session: AsyncSession,
    actor: Actor,
    wanted: AuditFilter,
    *,
    before_id: int | None = None,
    after_id: int | None = None,
    size: int = PAGE_SIZE,
) -> AuditPage:
    """The events below ``before_id`` (the next page) or just above ``after_id`` (the
    previous one), newest first; one more row than shown tells whether more follow."""
    _require_admin(actor)
    if after_id is not None:
        query = _events(wanted).where(AuditEvent.id > after_id).order_by(AuditEvent.id.asc())
        found = await _fetch(session, query, size)
        if len(found) > size:
            rows = found[:size][::-1]
            has_older = await _exists(session, wanted, AuditEvent.id < rows[-1].id)
            return AuditPage(rows, rows[-1].id if has_older else None, rows[0].id)
        # Nothing newer is left beyond these: that is the first page, shown in full.
        before_id = None
    query = _events(wanted).order_by(AuditEvent.id.desc())
    if before_id is not None:
        query = query.where(AuditEvent.id < before_id)
    found = await _fetch(session, query, size)
    rows = found[:size]
    older_than = rows[-1].id if len(found) > size else None
    is_first = before_id is None or not rows
    if is_first or not await _exists(session, wanted, AuditEvent.id > rows[0].id):
        return AuditPage(rows, older_than, None)
    return AuditPage(rows, older_than, rows[0].id)


async def known_actions(session: AsyncSession, actor: Actor) -> list[str]:
    _require_admin(actor)
    result = await session.execute(select(AuditEvent.action).distinct().order_by(AuditEvent.action))
    return list(result.scalars())


def _row(event: AuditEvent, login: str | None) -> AuditRow:
    return AuditRow(
        id=event.id,
        at=event.at,
        actor_login=login,
        surface=event.surface,
        action=event.action,
        target_type=event.target_type,
        target_id=event.target_id,
        address=event.address,
        details=event.details or {},
    )


CSV_HEADER: Sequence[str] = (
    "id",
    "at",
    "actor",
    "surface",
    "action",
    "target_type",
    "target_id",
    "address",
    "details",
)


def to_csv(rows: Iterable[AuditRow]) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(CSV_HEADER)
    for row in rows:
        details = ";".join(f"{key}={value}" for key, value in sorted(row.details.items()))
        writer.writerow(
            safe_cells(
                [
                    row.id,
                    row.at.isoformat(),
                    row.actor_login or "",
                    row.surface,
                    row.action,
                    row.target_type or "",
                    row.target_id or "",
                    row.address or "",
                    details,
                ]
            )
        )
    return buffer.getvalue()


@dataclass(frozen=True, slots=True)
class Origin:
    """Where an action came from: the surface and the client's address."""

    surface: str
    address: str | None = None


# For actions started by the portal itself (seeding, scripts) rather than a person's request.
SYSTEM = Origin("system")
CLI_AGENT_PREFIX = "hpcportal-cli/"


def surface_label(surface: str) -> str:
    """How the audit page names a surface (the stored value is the filter's and the CSV's)."""
    labels = {
        "web": _("web"),
        "api": _("api"),
        "cli": _("cli"),
        "poller": _("poller"),
        "system": _("system"),
    }
    return labels.get(surface, surface)


def api_surface(user_agent: str | None) -> str:
    """ "cli" for the portal's own command-line client, "api" for any other API caller."""
    return "cli" if (user_agent or "").startswith(CLI_AGENT_PREFIX) else "api"


async def record_action(
    session: AsyncSession,
    actor_user_id: int | None,
    origin: Origin,
    action: str,
    target: tuple[str, int | str | None],
    **details: Any,
) -> AuditEvent:
    """``record`` for a service action: who, from where, on what (type, id)."""
    kind, target_id = target
    return await record(
        session, actor_user_id, origin.surface, action, kind, target_id, origin.address, details
    )
