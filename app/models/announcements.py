"""Announcements shown to every signed-in user, and who dismissed which.

Administrators write some; the poller writes one per maintenance reservation it reads
from a cluster (``source = 'maintenance'``), whose words are made when shown, in the
reader's language, from the window it stores.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import ForeignKey, Index, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from app.models.base import Base, one_of, utc_now

ANNOUNCEMENT_SOURCES = ("admin", "maintenance")


class Announcement(Base):
    __tablename__ = "announcements"
    __table_args__ = (
        one_of("source", ANNOUNCEMENT_SOURCES),
        # One announcement per reservation: the poller updates it in place.
        UniqueConstraint("cluster", "reservation_name"),
        Index("ix_announcements_shown_until", "shown_until"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    source: Mapped[str] = mapped_column(String(16), default="admin")
    # Plain text; links are made from http(s) addresses when shown, nothing else is markup.
    body: Mapped[str] = mapped_column(Text, default="")
    shown_from: Mapped[datetime] = mapped_column(default=utc_now)
    # None: shown until deleted.
    shown_until: Mapped[datetime | None]
    is_dismissible: Mapped[bool] = mapped_column(default=True)
    created_by_id: Mapped[int | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"))
    created_at: Mapped[datetime] = mapped_column(default=utc_now)
    # A maintenance reservation's cluster, name and window, as the scheduler reported them.
    cluster: Mapped[str | None] = mapped_column(String(64))
    reservation_name: Mapped[str | None] = mapped_column(String(200))
    window_start: Mapped[datetime | None]
    window_end: Mapped[datetime | None]
    partition: Mapped[str | None] = mapped_column(String(64))


class AnnouncementDismissal(Base):
    """A user closed a dismissible announcement: the banner no longer shows it to them."""

    __tablename__ = "announcement_dismissals"

    announcement_id: Mapped[int] = mapped_column(
        ForeignKey("announcements.id", ondelete="CASCADE"), primary_key=True
    )
    user_id: Mapped[int] = mapped_column(
        ForeignKey("users.id", ondelete="CASCADE"), primary_key=True
    )
    dismissed_at: Mapped[datetime] = mapped_column(default=utc_now)
