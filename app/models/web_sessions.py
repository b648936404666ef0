"""Server-side browser sessions and the sign-in counters used for throttling."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import ForeignKey, String, Text
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
    # Set when signed in through the identity provider: the hint its logout endpoint asks for.
    id_token: Mapped[str | None] = mapped_column(Text)


class SsoSignInAttempt(Base):
    """A browser sent to the identity provider and not yet back (ADR 0028).

    Looked up by a hash of the ``state`` it carried and deleted when it comes back, so an
    answer is accepted once; ``browser_hash`` ties it to the browser that left (a hash of its
    pre-sign-in CSRF secret), so a sign-in started by someone else cannot be finished here.
    """

    __tablename__ = "sso_sign_in_attempts"

    state_hash: Mapped[str] = mapped_column(String(64), primary_key=True)
    browser_hash: Mapped[str] = mapped_column(String(64))
    nonce: Mapped[str] = mapped_column(String(128))
    code_verifier: Mapped[str] = mapped_column(String(128))
    next_path: Mapped[str] = mapped_column(String(2000))
    expires_at: Mapped[datetime] = mapped_column(index=True)


class SignInCounter(Base):
    """Sign-in attempts counted in a fixed window per key (a login, an address or the whole
    site). Each attempt increments its counters in one atomic upsert before the password is
    checked, so parallel guesses cannot all slip under the limit."""

    __tablename__ = "sign_in_counters"

    key: Mapped[str] = mapped_column(String(200), primary_key=True)
    window_start: Mapped[datetime] = mapped_column(index=True)
    attempts: Mapped[int]


class SpentAppTicket(Base):
    """An app host's launch ticket already exchanged, kept until it would have expired anyway.

    Every web process of the site sees the same rows, so a ticket opens its session once in
    all of them; the primary key lets only the first exchange insert it."""

    __tablename__ = "spent_app_tickets"

    nonce: Mapped[str] = mapped_column(String(64), primary_key=True)
    expires_at: Mapped[datetime] = mapped_column(index=True)
