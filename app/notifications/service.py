"""Notification rules and the delivery log, for their owner only (both surfaces use these)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from app.config import Settings
from app.errors import NotFound, ValidationFailed
from app.i18n import _
from app.jobs.authz import get_visible_job
from app.jobs.states import QUEUED_STATES, is_terminal
from app.models.jobs import Job
from app.models.notifications import DeliveryAttempt, Notification, NotificationRule
from app.models.users import User
from app.notifications import signing, wording
from app.notifications.urls import UnsafeUrl, check_target, normalised
from app.users import repository as users
from app.users.actor import Actor
from app.vocabulary.job_states import JobStateName
from app.vocabulary.notify import CHANNELS, NOTIFY_EVENTS, Channel, NotifyEvent

MAX_RULES = 50
# The delivery log shows the newest few, older ones a page at a time.
LOG_LENGTH = 10


@dataclass(frozen=True, slots=True)
class RuleDraft:
    event: str
    channel: str
    job_id: int | None = None
    webhook_url: str | None = None


@dataclass(frozen=True, slots=True)
class Delivery:
    """Where notifications may go, as this portal is configured."""

    has_email: bool
    allow_private_webhooks: bool

    @classmethod
    def of(cls, settings: Settings) -> Delivery:
        return cls(bool(settings.smtp_host), settings.webhook_allow_private)


@dataclass(frozen=True, slots=True)
class RuleView:
    id: int
    event: str
    channel: str
    job_id: int | None
    job_name: str | None
    target: str
    created_at: datetime


@dataclass(frozen=True, slots=True)
class CreatedRule:
    rule: RuleView
    # The webhook's signing secret: returned by the creating request only.
    secret: str | None


@dataclass(frozen=True, slots=True)
class AttemptView:
    at: datetime
    channel: str
    event: str
    job_id: int
    job_name: str
    attempt: int
    is_success: bool
    status_code: int | None
    response: str | None
    error: str | None


async def own_email(session: AsyncSession, actor: Actor) -> str | None:
    return await session.scalar(select(User.email).where(User.id == actor.user_id))


def _view(rule: NotificationRule, job_name: str | None, email: str | None) -> RuleView:
    target = rule.webhook_url if rule.channel == Channel.WEBHOOK else email
    return RuleView(
        rule.id,
        rule.event,
        rule.channel,
        rule.job_id,
        job_name,
        target or _("your e-mail address"),
        rule.created_at,
    )


async def list_rules(
    session: AsyncSession, actor: Actor, *, job_id: int | None = None
) -> list[RuleView]:
    """The actor's rules, newest first; with ``job_id``, only those for that one job."""
    query = (
        select(NotificationRule, Job.name)
        .outerjoin(Job, Job.id == NotificationRule.job_id)
        .where(NotificationRule.user_id == actor.user_id)
        .order_by(NotificationRule.id.desc())
    )
    if job_id is not None:
        query = query.where(NotificationRule.job_id == job_id)
    email = await own_email(session, actor)
    return [_view(rule, name, email) for rule, name in await session.execute(query)]


def _choice_problems(draft: RuleDraft) -> dict[str, str]:
    problems = {}
    if draft.event not in NOTIFY_EVENTS:
        problems["event"] = _("Choose when to be told: when a job starts, ends or fails.")
    if draft.channel not in CHANNELS:
        problems["channel"] = _("Choose this browser, e-mail or a webhook.")
    if draft.event == NotifyEvent.ALLOCATION and draft.job_id is not None:
        problems["event"] = _("Allocation warnings are about projects, not about one job.")
    if draft.event == NotifyEvent.SESSION_IDLE and draft.channel == Channel.BROWSER:
        problems["channel"] = _(
            "Your sessions page shows this warning itself; choose e-mail or a webhook."
        )
    return problems


def events_still_possible(job: Job) -> tuple[str, ...]:
    """The events a job may yet go through: none once it has ended, no start once started."""
    if is_terminal(job.state):
        return ()
    if job.started_at is not None or job.state not in QUEUED_STATES | {JobStateName.SUBMITTING}:
        return tuple(event for event in NOTIFY_EVENTS if event != NotifyEvent.STARTED)
    return NOTIFY_EVENTS


def job_problems(job: Job, event: str) -> dict[str, str]:
    """Why a rule for this one job could never be followed, if it could not."""
    if is_terminal(job.state):
        return {"event": _("This job has ended: there is nothing left to tell you about it.")}
    if event not in events_still_possible(job):
        return {"event": _("This job has already started.")}
    return {}


async def _channel_problems(
    session: AsyncSession, actor: Actor, draft: RuleDraft, delivery: Delivery
) -> dict[str, str]:
    if draft.channel == Channel.BROWSER:
        return {}
    if draft.channel == Channel.EMAIL:
        if not delivery.has_email:
            return {
                "channel": _(
                    "This portal sends no e-mail; use a webhook, or ask the "
                    "administrators to configure a mail server."
                )
            }
        if not await own_email(session, actor):
            return {
                "channel": _(
                    "Your account has no e-mail address; ask an administrator to "
                    "add one, or use a webhook."
                )
            }
        return {}
    if not (draft.webhook_url or "").strip():
        return {"webhook_url": _("Give the address the webhook is sent to.")}
    try:
        await check_target(draft.webhook_url or "", allow_private=delivery.allow_private_webhooks)
    except UnsafeUrl as error:
        return {"webhook_url": wording.shown(str(error)) or ""}
    return {}


async def _is_duplicate(
    session: AsyncSession, actor: Actor, draft: RuleDraft, url: str | None
) -> bool:
    query = select(NotificationRule.id).where(
        NotificationRule.user_id == actor.user_id,
        NotificationRule.event == draft.event,
        NotificationRule.channel == draft.channel,
        NotificationRule.job_id.is_(None)
        if draft.job_id is None
        else NotificationRule.job_id == draft.job_id,
        NotificationRule.webhook_url.is_(None)
        if url is None
        else NotificationRule.webhook_url == url,
    )
    return (await session.scalars(query.limit(1))).first() is not None


async def _limits(session: AsyncSession, actor: Actor, draft: RuleDraft, url: str | None) -> None:
    # Checked and inserted under the user's lock: sixty requests at once cannot all see room
    # for one more rule (or all find the same rule missing).
    await users.hold_for_update(session, actor.user_id)
    if await _is_duplicate(session, actor, draft, url):
        raise ValidationFailed(_("You already have this rule."))
    count = await session.scalar(
        select(func.count()).where(NotificationRule.user_id == actor.user_id)
    )
    if (count or 0) >= MAX_RULES:
        raise ValidationFailed(
            _(
                "You have %(count)s rules, the most one account may have; delete one first.",
                count=MAX_RULES,
            )
        )


async def create_rule(
    session: AsyncSession, actor: Actor, draft: RuleDraft, delivery: Delivery
) -> CreatedRule:
    """A new rule of the actor's; a one-job rule needs a job the actor may see."""
    # A job the actor may not see is "not found" before anything else is said about it.
    job = None if draft.job_id is None else await get_visible_job(session, actor, draft.job_id)
    problems = _choice_problems(draft) or (job_problems(job, draft.event) if job else {})
    problems = problems or await _channel_problems(session, actor, draft, delivery)
    if problems:
        raise ValidationFailed(fields=problems)
    # Stored as delivered: the host in ASCII, so the duplicate check sees one spelling.
    url = normalised(draft.webhook_url or "") if draft.channel == Channel.WEBHOOK else None
    await _limits(session, actor, draft, url)
    rule = NotificationRule(
        user_id=actor.user_id,
        event=draft.event,
        job_id=draft.job_id,
        channel=draft.channel,
        webhook_url=url,
        secret=signing.new_secret() if url else None,
    )
    session.add(rule)
    await session.flush()
    view = _view(rule, job.name if job else None, await own_email(session, actor))
    return CreatedRule(view, rule.secret)


async def delete_rule(session: AsyncSession, actor: Actor, rule_id: int) -> None:
    """Deletes the rule with its pending notifications and their delivery log."""
    rule = await session.get(NotificationRule, rule_id)
    if rule is None or rule.user_id != actor.user_id:
        raise NotFound(_("No such notification rule."))
    await session.delete(rule)
    await session.flush()


async def list_attempts(
    session: AsyncSession, actor: Actor, *, limit: int = LOG_LENGTH, offset: int = 0
) -> list[AttemptView]:
    """The actor's latest delivery attempts, newest first, from the ``offset``-th."""
    query = (
        select(DeliveryAttempt, Notification.event, Job.id, Job.name)
        .join(Notification, Notification.id == DeliveryAttempt.notification_id)
        .join(Job, Job.id == Notification.job_id)
        .where(DeliveryAttempt.user_id == actor.user_id)
        .order_by(DeliveryAttempt.id.desc())
        .offset(offset)
        .limit(limit)
    )
    return [
        AttemptView(
            row.at,
            row.channel,
            event,
            job_id,
            job_name,
            row.attempt,
            row.is_success,
            row.status_code,
            row.response,
            row.error,
        )
        for row, event, job_id, job_name in await session.execute(query)
    ]
