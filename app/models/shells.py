"""Shells open in the browser, one row each while it is open, in whichever web process."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import ForeignKey, String
from sqlalchemy.orm import Mapped, mapped_column

from app.models.base import Base


class OpenShellSlot(Base):
    """One open shell, counted against its user's limit by every web worker and replica.

    The process holding it renews ``seen_at`` while the shell is open and deletes the row
    when it closes; a process that died leaves a row that stops counting once it is stale.
    """

    __tablename__ = "open_shells"

    id: Mapped[int] = mapped_column(primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    cluster: Mapped[str] = mapped_column(String(64))
    opened_at: Mapped[datetime]
    seen_at: Mapped[datetime] = mapped_column(index=True)
