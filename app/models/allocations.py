"""Allocations an administrator sets for a project, and the thresholds already announced."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import BigInteger, ForeignKey, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from app.models.base import Base, utc_now


class ProjectAllocation(Base):
    """CPU minutes granted to a project where the scheduler holds no limit of its own."""

    __tablename__ = "project_allocations"

    project_id: Mapped[int] = mapped_column(
        ForeignKey("projects.id", ondelete="CASCADE"), primary_key=True
    )
    cpu_minutes: Mapped[int] = mapped_column(BigInteger)
    set_by_user_id: Mapped[int | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"))
    updated_at: Mapped[datetime] = mapped_column(default=utc_now, onupdate=utc_now)


class AllocationAlert(Base):
    """A threshold a project's use crossed for one allocation size: announced once."""

    __tablename__ = "allocation_alerts"
    __table_args__ = (UniqueConstraint("project_id", "limit_minutes", "threshold"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    project_id: Mapped[int] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"))
    limit_minutes: Mapped[int] = mapped_column(BigInteger)
    threshold: Mapped[int]
    """Per cent of the allocation: 80 or 95."""
    at: Mapped[datetime] = mapped_column(default=utc_now)
