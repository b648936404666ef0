"""Jobs submitted through the portal and the history of their state changes."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, BigInteger, ForeignKey, Index, String, Text, UniqueConstraint, false
from sqlalchemy.orm import Mapped, mapped_column, relationship

from app.models.base import Base, one_of, utc_now
from app.vocabulary.job_states import JobStateName

JOB_STATES = tuple(state.value for state in JobStateName)
JOB_EVENT_SOURCES = ("submit", "poller", "user", "system")


def _trigram_index(column: str) -> Index:
    return Index(
        f"ix_jobs_{column}_trgm",
        column,
        postgresql_using="gin",
        postgresql_ops={column: "gin_trgm_ops"},
    ).ddl_if(dialect="postgresql")


class Job(Base):
    __tablename__ = "jobs"
    __table_args__ = (
        UniqueConstraint("uuid"),
        UniqueConstraint("owner_user_id", "idempotency_key"),
        one_of("state", JOB_STATES),
        Index("ix_jobs_owner_user_id_id", "owner_user_id", "id"),
        Index("ix_jobs_project_id_id", "project_id", "id"),
        Index("ix_jobs_cluster_state", "cluster", "state"),
        # Not unique: Slurm reuses ids after a controller state wipe or a MaxJobId
        # wrap-around, and the portal UUID is the job's identity anyway.
        Index("ix_jobs_cluster_slurm_job_id", "cluster", "slurm_job_id"),
        Index("ix_jobs_array_parent_id", "array_parent_id"),
        # PostgreSQL only (pg_trgm): serve the job list's ILIKE '%text%' name search and
        # its Slurm id match without reading every visible row.
        _trigram_index("name"),
        _trigram_index("slurm_job_id"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    uuid: Mapped[str] = mapped_column(String(36))
    owner_user_id: Mapped[int] = mapped_column(ForeignKey("users.id"))
    project_id: Mapped[int] = mapped_column(ForeignKey("projects.id"))
    cluster: Mapped[str] = mapped_column(String(64))
    template_version_id: Mapped[int | None] = mapped_column(
        ForeignKey("template_versions.id", ondelete="SET NULL")
    )
    parameters: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    script: Mapped[str] = mapped_column(Text)
    # The script's arguments ($1, $2…), as ``sbatch job.sh ARG…`` gives them.
    script_args: Mapped[list[str] | None] = mapped_column(JSON)
    idempotency_key: Mapped[str | None] = mapped_column(String(128))
    # Text, not a number: array tasks are identified as "<array job id>_<task id>".
    slurm_job_id: Mapped[str | None] = mapped_column(String(32))
    slurm_raw_id: Mapped[str | None] = mapped_column(String(32))
    """Slurm's own number for the record (an array task has its own); ``%j`` in log paths."""
    array_parent_id: Mapped[int | None] = mapped_column(ForeignKey("jobs.id", ondelete="CASCADE"))
    array_task_id: Mapped[int | None]
    submitted_outside: Mapped[bool] = mapped_column(default=False, server_default=false())
    """Found in the queue, submitted without the portal (sbatch on the cluster)."""
    retry_of_id: Mapped[int | None] = mapped_column(ForeignKey("jobs.id", ondelete="SET NULL"))
    """The array whose failed tasks this job runs again."""
    dependency: Mapped[str | None] = mapped_column(String(255))
    """The ``--dependency`` value it was submitted with (Slurm ids), e.g. ``afterok:123``."""
    name: Mapped[str] = mapped_column(String(200))
    state: Mapped[str] = mapped_column(String(32), default="submitting")
    native_state: Mapped[str | None] = mapped_column(String(64))
    reason: Mapped[str | None] = mapped_column(String(255))
    exit_code: Mapped[int | None]
    exit_signal: Mapped[int | None]
    submitted_at: Mapped[datetime | None]
    started_at: Mapped[datetime | None]
    expected_start_at: Mapped[datetime | None]
    """Slurm's estimate for a pending job (the backfill scheduler's StartTime); None otherwise."""
    ended_at: Mapped[datetime | None]
    last_seen_at: Mapped[datetime | None]

    # What was asked for.
    partition: Mapped[str | None] = mapped_column(String(64))
    qos: Mapped[str | None] = mapped_column(String(64))
    time_limit_minutes: Mapped[int | None]
    cpus: Mapped[int | None]
    # The request exactly as given, so a resubmission can repeat it.
    ntasks: Mapped[int | None]
    cpus_per_task: Mapped[int | None]
    environment: Mapped[dict[str, str] | None] = mapped_column(JSON)
    memory_mb: Mapped[int | None]
    gpus: Mapped[int | None]
    gpu_type: Mapped[str | None] = mapped_column(String(64))
    nodes: Mapped[int | None]
    chosen_partition: Mapped[str | None] = mapped_column(String(64))
    """The partition Slurm chose: the default when none was asked for, one of several."""
    # Where it runs or ran, as Slurm writes it (``c[1-2]``); set once the job has started.
    node_list: Mapped[str | None] = mapped_column(String(255))
    array_spec: Mapped[str | None] = mapped_column(String(255))

    # What was used and allocated, from accounting.
    elapsed_seconds: Mapped[int | None]
    total_cpu_seconds: Mapped[int | None]
    max_rss_bytes: Mapped[int | None] = mapped_column(BigInteger)
    alloc_cpus: Mapped[int | None]
    alloc_mem_mb: Mapped[int | None]
    alloc_gpus: Mapped[int | None]

    work_dir: Mapped[str | None] = mapped_column(String(1024))
    stdout_path: Mapped[str | None] = mapped_column(String(1024))
    stderr_path: Mapped[str | None] = mapped_column(String(1024))
    submit_error: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(default=utc_now)
    updated_at: Mapped[datetime] = mapped_column(default=utc_now, onupdate=utc_now)

    events: Mapped[list[JobEvent]] = relationship(
        back_populates="job",
        order_by="JobEvent.id",
        cascade="all, delete-orphan",
        passive_deletes=True,
    )


class JobEvent(Base):
    __tablename__ = "job_events"
    __table_args__ = (
        one_of("source", JOB_EVENT_SOURCES),
        one_of("to_state", JOB_STATES),
        Index("ix_job_events_job_id_id", "job_id", "id"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    job_id: Mapped[int] = mapped_column(ForeignKey("jobs.id", ondelete="CASCADE"))
    at: Mapped[datetime] = mapped_column(default=utc_now)
    from_state: Mapped[str | None] = mapped_column(String(32))
    to_state: Mapped[str] = mapped_column(String(32))
    reason: Mapped[str | None] = mapped_column(String(255))
    source: Mapped[str] = mapped_column(String(16))

    job: Mapped[Job] = relationship(back_populates="events")
