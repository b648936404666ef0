"""Portal users and the Unix/Slurm account each one has on a cluster."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import ForeignKey, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column, relationship

from app.models.base import Base, utc_now


class User(Base):
    __tablename__ = "users"
    __table_args__ = (UniqueConstraint("sso_issuer", "sso_subject"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    login: Mapped[str] = mapped_column(String(64), unique=True)
    display_name: Mapped[str] = mapped_column(String(200))
    email: Mapped[str | None] = mapped_column(String(320))
    # Null for accounts that only log in through an external identity provider.
    password_hash: Mapped[str | None] = mapped_column(String(255))
    is_site_admin: Mapped[bool] = mapped_column(default=False)
    is_active: Mapped[bool] = mapped_column(default=True)
    # The interface language the user chose; null follows the browser's Accept-Language.
    locale: Mapped[str | None] = mapped_column(String(8))
    # "light" or "dark"; null follows the browser's prefers-color-scheme.
    theme: Mapped[str | None] = mapped_column(String(8))
    created_at: Mapped[datetime] = mapped_column(default=utc_now)
    # The identity provider's own name for this person (``iss`` and ``sub``), bound at the
    # first single sign-on: a login later given to someone else at the provider is refused.
    sso_issuer: Mapped[str | None] = mapped_column(String(255))
    sso_subject: Mapped[str | None] = mapped_column(String(255))

    cluster_accounts: Mapped[list[UserClusterAccount]] = relationship(
        back_populates="user", cascade="all, delete-orphan", passive_deletes=True
    )


class UserClusterAccount(Base):
    """The username a portal user runs jobs as on one cluster."""

    __tablename__ = "user_cluster_accounts"
    __table_args__ = (
        UniqueConstraint("cluster", "username"),
        UniqueConstraint("user_id", "cluster"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    cluster: Mapped[str] = mapped_column(String(64))
    username: Mapped[str] = mapped_column(String(64))

    user: Mapped[User] = relationship(back_populates="cluster_accounts")
