"""Announcements: administrators post them, everyone signed in reads them, dismissible
ones can be closed (per user); maintenance windows come from the poller."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy.ext.asyncio import AsyncSession

from app.announcements import repository
from app.announcements.maintenance import Clash, Window, clash, utc_text
from app.announcements.text import Segment, segments
from app.audit.service import Origin, record_action
from app.errors import Forbidden, NotFound, ValidationFailed
from app.i18n import _
from app.models.announcements import Announcement
from app.models.base import utc_now
from app.users.actor import Actor

MAX_BODY = 4000


@dataclass(frozen=True, slots=True)
class AnnouncementView:
    """An announcement as a reader sees it, in their language."""

    id: int
    source: str
    text: str
    segments: tuple[Segment, ...]
    shown_from: datetime
    shown_until: datetime | None
    is_dismissible: bool
    is_dismissed: bool
    cluster: str | None = None
    window_start: datetime | None = None
    window_end: datetime | None = None


@dataclass(frozen=True, slots=True)
class Draft:
    body: str
    shown_from: datetime | None = None
    shown_until: datetime | None = None
    is_dismissible: bool = True


def _text(row: Announcement) -> str:
    if row.source != "maintenance" or row.window_start is None:
        return row.body
    if row.window_end is None:
        return _(
            "%(cluster)s stops for maintenance from %(start)s until further notice.",
            cluster=row.cluster,
            start=utc_text(row.window_start),
        )
    return _(
        "%(cluster)s stops for maintenance from %(start)s to %(end)s.",
        cluster=row.cluster,
        start=utc_text(row.window_start),
        end=utc_text(row.window_end),
    )


def view(row: Announcement, dismissed: bool = False) -> AnnouncementView:
    text = _text(row)
    return AnnouncementView(
        id=row.id,
        source=row.source,
        text=text,
        segments=tuple(segments(text)),
        shown_from=row.shown_from,
        shown_until=row.shown_until,
        is_dismissible=row.is_dismissible,
        is_dismissed=dismissed,
        cluster=row.cluster,
        window_start=row.window_start,
        window_end=row.window_end,
    )


async def shown(
    session: AsyncSession,
    actor: Actor,
    *,
    now: datetime | None = None,
    after: int | None = None,
    limit: int = 100,
) -> list[AnnouncementView]:
    """What is announced now, newest first, each saying whether ``actor`` dismissed it."""
    rows = await repository.list_shown(session, now or utc_now(), after=after, limit=limit)
    closed = await repository.dismissed_ids(session, actor.user_id, [r.id for r in rows])
    return [view(row, row.id in closed) for row in rows]


async def banner(session: AsyncSession, actor: Actor) -> list[AnnouncementView]:
    """The announcements every page shows ``actor``: those shown now and not dismissed."""
    return [a for a in await shown(session, actor, limit=5) if not a.is_dismissed]


async def dismiss(session: AsyncSession, actor: Actor, announcement_id: int) -> None:
    row = await repository.get(session, announcement_id)
    if row is None:
        raise NotFound(_("No such announcement."))
    if not row.is_dismissible:
        raise ValidationFailed(_("This announcement cannot be dismissed."))
    await repository.add_dismissal(session, row.id, actor.user_id)


def _require_admin(actor: Actor) -> None:
    if not actor.is_site_admin:
        raise Forbidden(_("Only site administrators manage announcements."))


def _checked(draft: Draft) -> Draft:
    body = draft.body.strip()
    problems = {}
    if not body:
        problems["body"] = _("Write the announcement.")
    elif len(body) > MAX_BODY:
        problems["body"] = _("At most %(count)s characters.", count=MAX_BODY)
    if draft.shown_from and draft.shown_until and draft.shown_until <= draft.shown_from:
        problems["shown_until"] = _("The end must come after the start.")
    if problems:
        raise ValidationFailed(next(iter(problems.values())), problems)
    return Draft(body, draft.shown_from, draft.shown_until, draft.is_dismissible)


async def post(
    session: AsyncSession, actor: Actor, draft: Draft, origin: Origin
) -> AnnouncementView:
    _require_admin(actor)
    checked = _checked(draft)
    row = Announcement(
        source="admin",
        body=checked.body,
        shown_from=checked.shown_from or utc_now(),
        shown_until=checked.shown_until,
        is_dismissible=checked.is_dismissible,
        created_by_id=actor.user_id,
    )
    session.add(row)
    await session.flush()
    await record_action(
        session, actor.user_id, origin, "announcement.post", ("announcement", row.id)
    )
    return view(row)


async def list_for_admin(session: AsyncSession, actor: Actor) -> list[AnnouncementView]:
    _require_admin(actor)
    return [view(row) for row in await repository.list_all(session)]


async def withdraw(
    session: AsyncSession, actor: Actor, announcement_id: int, origin: Origin
) -> None:
    """Delete an administrator's announcement (a maintenance one goes with its reservation)."""
    _require_admin(actor)
    row = await repository.get(session, announcement_id)
    if row is None or row.source != "admin":
        raise NotFound(_("No such announcement."))
    await repository.delete_ids(session, [row.id])
    target = ("announcement", row.id)
    await record_action(session, actor.user_id, origin, "announcement.withdraw", target)


async def maintenance_clash(
    session: AsyncSession,
    cluster: str,
    asked_minutes: int | None,
    partition: str | None,
    now: datetime | None = None,
) -> Clash | None:
    """The maintenance window a job with this limit would wait for, if any; without a limit,
    the partition's default is the job's, as Slurm gives it."""
    rows = await repository.list_maintenance(session, cluster)
    if not rows:
        return None
    if asked_minutes is None:
        asked_minutes = await repository.partition_default_minutes(session, cluster, partition)
    windows = [
        Window(cluster, row.window_start, row.window_end, row.partition)
        for row in rows
        if row.window_start is not None
    ]
    return clash(windows, now or utc_now(), asked_minutes, partition)
