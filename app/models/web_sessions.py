"""Server-side browser sessions and the sign-in counters used for throttling."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import ForeignKey, String
from sqlalchemy.orm import Mapped, mapped_column

from app.models.base import Base, utc_now


class WebSession(Base):
    """A signed-in browser. Only a hash of the cookie's secret is stored."""

    __tablename__ = "web_sessions"

    id: Mapped[int] = mapped_column(primary_key=True)
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    csrf_token: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[datetime] = mapped_column(default=utc_now)
    last_seen_at: Mapped[datetime] = mapped_column(default=utc_now)
    expires_at: Mapped[datetime]


class SignInCounter(Base):
    """Sign-in attempts counted in a fixed window per key (a login, an address or the whole
    site). Each attempt increments its counters in one atomic upsert before the password is
    checked, so parallel guesses cannot all slip under the limit."""

    __tablename__ = "sign_in_counters"

    key: Mapped[str] = mapped_column(String(200), primary_key=True)
    window_start: Mapped[datetime] = mapped_column(index=True)
    attempts: Mapped[int]
