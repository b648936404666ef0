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
    created_at: Mapped[datetime] = mapped_column(default=utc_now)

    job: Mapped[Job] = relationship(lazy="joined")
