"""Workflows: named graphs of steps submitted together, and each run's jobs."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, ForeignKey, Index, String
from sqlalchemy.orm import Mapped, mapped_column

from app.models.base import Base, utc_now


class Workflow(Base):
    """Steps (a script or a template with its values each) and which steps each waits for."""

    __tablename__ = "workflows"
    __table_args__ = (Index("ix_workflows_project_id_id", "project_id", "id"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    project_id: Mapped[int] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"))
    owner_user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    name: Mapped[str] = mapped_column(String(200))
    steps: Mapped[list[dict[str, Any]]] = mapped_column(JSON)
    is_shared: Mapped[bool] = mapped_column(default=False)
    """Shared: every member of the project sees it and may run it as themselves."""
    created_at: Mapped[datetime] = mapped_column(default=utc_now)


class WorkflowRun(Base):
    """One submission of a workflow's steps by one user."""

    __tablename__ = "workflow_runs"
    __table_args__ = (Index("ix_workflow_runs_workflow_id_id", "workflow_id", "id"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    workflow_id: Mapped[int] = mapped_column(ForeignKey("workflows.id", ondelete="CASCADE"))
    owner_user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    created_at: Mapped[datetime] = mapped_column(default=utc_now)


class WorkflowRunJob(Base):
    """A step's job in a run; a re-run adds the step's next attempt, the latest counts."""

    __tablename__ = "workflow_run_jobs"
    __table_args__ = (Index("ix_workflow_run_jobs_run_id", "run_id"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    run_id: Mapped[int] = mapped_column(ForeignKey("workflow_runs.id", ondelete="CASCADE"))
    step: Mapped[str] = mapped_column(String(100))
    job_id: Mapped[int] = mapped_column(ForeignKey("jobs.id", ondelete="CASCADE"))
    attempt: Mapped[int] = mapped_column(default=1)
