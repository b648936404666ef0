"""Reusable job templates and their immutable, numbered versions."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, CheckConstraint, ForeignKey, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column, relationship

from app.models.base import Base, one_of, utc_now

TEMPLATE_SCOPES = ("personal", "project", "site")


class JobTemplate(Base):
    __tablename__ = "job_templates"
    __table_args__ = (
        one_of("scope", TEMPLATE_SCOPES),
        CheckConstraint(
            "scope <> 'project' OR project_id IS NOT NULL", name="project_scope_has_project"
        ),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(200))
    description: Mapped[str] = mapped_column(Text, default="")
    scope: Mapped[str] = mapped_column(String(16))
    owner_user_id: Mapped[int] = mapped_column(ForeignKey("users.id"), index=True)
    project_id: Mapped[int | None] = mapped_column(
        ForeignKey("projects.id", ondelete="CASCADE"), index=True
    )
    # The two tables reference each other, so this key is added after both exist.
    current_version_id: Mapped[int | None] = mapped_column(
        ForeignKey("template_versions.id", use_alter=True, ondelete="SET NULL")
    )
    is_archived: Mapped[bool] = mapped_column(default=False)
    created_at: Mapped[datetime] = mapped_column(default=utc_now)
    updated_at: Mapped[datetime] = mapped_column(default=utc_now, onupdate=utc_now)

    versions: Mapped[list[TemplateVersion]] = relationship(
        back_populates="template",
        foreign_keys="TemplateVersion.template_id",
        order_by="TemplateVersion.version",
        cascade="all, delete-orphan",
        passive_deletes=True,
    )
    current_version: Mapped[TemplateVersion | None] = relationship(
        foreign_keys=[current_version_id], post_update=True
    )


class TemplateVersion(Base):
    __tablename__ = "template_versions"
    __table_args__ = (UniqueConstraint("template_id", "version"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    template_id: Mapped[int] = mapped_column(ForeignKey("job_templates.id", ondelete="CASCADE"))
    version: Mapped[int]
    script: Mapped[str] = mapped_column(Text)
    parameter_schema: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    defaults: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    created_by_user_id: Mapped[int] = mapped_column(ForeignKey("users.id"))
    created_at: Mapped[datetime] = mapped_column(default=utc_now)
    change_note: Mapped[str] = mapped_column(Text, default="")

    template: Mapped[JobTemplate] = relationship(
        back_populates="versions", foreign_keys=[template_id]
    )
