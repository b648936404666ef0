"""Append-only record of who did what, from which surface."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, ForeignKey, Index, String
from sqlalchemy.orm import Mapped, mapped_column

from app.models.base import Base, one_of, utc_now

AUDIT_SURFACES = ("web", "api", "cli", "poller", "system")


class AuditEvent(Base):
    __tablename__ = "audit_events"
    __table_args__ = (
        one_of("surface", AUDIT_SURFACES),
        Index("ix_audit_events_actor_user_id_id", "actor_user_id", "id"),
        Index("ix_audit_events_target_type_target_id", "target_type", "target_id"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    at: Mapped[datetime] = mapped_column(default=utc_now, index=True)
    # Kept when the user is deleted so the trail outlives the account.
    actor_user_id: Mapped[int | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"))
    surface: Mapped[str] = mapped_column(String(16))
    action: Mapped[str] = mapped_column(String(64))
    target_type: Mapped[str | None] = mapped_column(String(64))
    target_id: Mapped[str | None] = mapped_column(String(64))
    address: Mapped[str | None] = mapped_column(String(45))
    details: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
