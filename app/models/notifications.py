"""Notification rules, the outbox of notifications to deliver and every delivery attempt."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import CheckConstraint, ForeignKey, Index, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from app.models.base import Base, one_of, utc_now
from app.vocabulary.notify import CHANNELS, NOTIFY_EVENTS

OUTBOX_STATUSES = ("pending", "sent", "failed")


class NotificationRule(Base):
    """One user's wish: tell me when a job (``job_id``) or any job of mine (None) does X."""

    __tablename__ = "notification_rules"
    __table_args__ = (
        one_of("event", NOTIFY_EVENTS),
        one_of("channel", CHANNELS),
        CheckConstraint(
            "channel != 'webhook' OR (webhook_url IS NOT NULL AND secret IS NOT NULL)",
            name="webhook_has_url_and_secret",
        ),
        Index("ix_notification_rules_user_id_id", "user_id", "id"),
        Index("ix_notification_rules_job_id", "job_id"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    event: Mapped[str] = mapped_column(String(16))
    # None: every job the user owns (array tasks excepted: their array notifies once).
    job_id: Mapped[int | None] = mapped_column(ForeignKey("jobs.id", ondelete="CASCADE"))
    channel: Mapped[str] = mapped_column(String(16))
    webhook_url: Mapped[str | None] = mapped_column(String(2000))
    # Kept in clear: signing needs it. Shown to its owner once, when the rule is created.
    secret: Mapped[str | None] = mapped_column(String(128))
    created_at: Mapped[datetime] = mapped_column(default=utc_now)


class Notification(Base):
    """The outbox: written in the transaction that records the job's state change.

    The unique key makes a second row for the same rule, job and event impossible, whoever
    writes it (two pollers, a poller that died and came back).
    """

    __tablename__ = "notifications"
    __table_args__ = (
        UniqueConstraint("rule_id", "job_id", "event"),
        one_of("event", NOTIFY_EVENTS),
        one_of("status", OUTBOX_STATUSES),
        Index("ix_notifications_status_next_attempt_at", "status", "next_attempt_at"),
        Index("ix_notifications_user_id_id", "user_id", "id"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    rule_id: Mapped[int] = mapped_column(ForeignKey("notification_rules.id", ondelete="CASCADE"))
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    # None for an allocation notification, which is about a project.
    job_id: Mapped[int | None] = mapped_column(ForeignKey("jobs.id", ondelete="CASCADE"))
    project_id: Mapped[int | None] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"))
    threshold: Mapped[int | None]
    """The per cent of its allocation the project reached (allocation notifications)."""
    event: Mapped[str] = mapped_column(String(16))
    # The state the change led to, so a late delivery still tells what happened then.
    job_state: Mapped[str] = mapped_column(String(32))
    status: Mapped[str] = mapped_column(String(16), default="pending")
    attempts: Mapped[int] = mapped_column(default=0)
    next_attempt_at: Mapped[datetime] = mapped_column(default=utc_now)
    # Who is delivering it and until when; a claim past its time is free to take again.
    claim_token: Mapped[str | None] = mapped_column(String(36))
    claimed_until: Mapped[datetime | None]
    sent_at: Mapped[datetime | None]
    created_at: Mapped[datetime] = mapped_column(default=utc_now)


class DeliveryAttempt(Base):
    """One try at delivering a notification: the log its owner sees."""

    __tablename__ = "notification_deliveries"
    __table_args__ = (
        one_of("channel", CHANNELS),
        Index("ix_notification_deliveries_user_id_id", "user_id", "id"),
        Index("ix_notification_deliveries_notification_id", "notification_id"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    notification_id: Mapped[int] = mapped_column(ForeignKey("notifications.id", ondelete="CASCADE"))
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    attempt: Mapped[int]
    at: Mapped[datetime] = mapped_column(default=utc_now)
    channel: Mapped[str] = mapped_column(String(16))
    is_success: Mapped[bool]
    # The webhook's HTTP status, or the SMTP server's reply code.
    status_code: Mapped[int | None]
    # The SMTP server's reply text, or the start of the webhook's answer.
    response: Mapped[str | None] = mapped_column(String(500))
    error: Mapped[str | None] = mapped_column(Text)
