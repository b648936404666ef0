"""Interactive app sessions: a Slurm job running an app server, reached through the portal."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, ForeignKey, Index, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column, relationship

from app.models.base import Base, utc_now
from app.models.jobs import Job


class InteractiveSession(Base):
    __tablename__ = "interactive_sessions"
    __table_args__ = (
        UniqueConstraint("uuid"),
        UniqueConstraint("job_id"),
        Index("ix_interactive_sessions_owner_user_id_id", "owner_user_id", "id"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    # Names the session's folder on the cluster, so it is known before Slurm has a job id.
    uuid: Mapped[str] = mapped_column(String(36))
    owner_user_id: Mapped[int] = mapped_column(ForeignKey("users.id"))
    job_id: Mapped[int] = mapped_column(ForeignKey("jobs.id", ondelete="CASCADE"))
    app: Mapped[str] = mapped_column(String(32))
    # What the launch form held, for "Relaunch with the same values".
    values: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    # Where the server listens on its job's node and its secret, from the file the job
    # wrote; the secret is sent to the app by the proxy and never shown.
    port: Mapped[int | None]
    secret: Mapped[str | None] = mapped_column(String(255))
    ready_at: Mapped[datetime | None]
    # Idleness, as the poller's probe of the app last found it (app/interactive/idle.py):
    # since when nobody has used it, when it was last asked, when its owner was warned and
    # of which end, when they chose to keep it, when it was ended for it.
    idle_since: Mapped[datetime | None]
    idle_checked_at: Mapped[datetime | None]
    idle_warned_at: Mapped[datetime | None]
    idle_ends_at: Mapped[datetime | None]
    kept_at: Mapped[datetime | None]
    idle_ended_at: Mapped[datetime | None]
    # A desktop's: when someone (its owner or a viewer) last had it open through the portal's
    # bridge, stamped at connect, while the stream lasts and when it closes (its idle probe).
    viewed_at: Mapped[datetime | None]
    created_at: Mapped[datetime] = mapped_column(default=utc_now)

    job: Mapped[Job] = relationship(lazy="joined")


class InteractiveSessionViewer(Base):
    """A signed-in portal user a desktop's owner lets watch it, view-only, until revoked."""

    __tablename__ = "interactive_session_viewers"
    __table_args__ = (UniqueConstraint("session_id", "user_id"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    session_id: Mapped[int] = mapped_column(
        ForeignKey("interactive_sessions.id", ondelete="CASCADE")
    )
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    created_at: Mapped[datetime] = mapped_column(default=utc_now)
