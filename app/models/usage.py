"""Accounting records ingested from the scheduler and the daily rollups reports read."""

from __future__ import annotations

from datetime import date, datetime

from sqlalchemy import BigInteger, Date, Float, Index, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from app.models.base import Base, utc_now


class AccountingJob(Base):
    """One job allocation as the scheduler's accounting reported it last (steps folded in)."""

    __tablename__ = "accounting_jobs"
    __table_args__ = (
        # Slurm reuses ids once its state is wiped, so the id alone does not name one job.
        UniqueConstraint("cluster", "job_id", "submit_time"),
        Index("ix_accounting_jobs_cluster_end_time", "cluster", "end_time"),
        Index("ix_accounting_jobs_cluster_account_user", "cluster", "account", "user_name"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    cluster: Mapped[str] = mapped_column(String(64))
    job_id: Mapped[str] = mapped_column(String(64))
    array_job_id: Mapped[str | None] = mapped_column(String(32))
    array_task_id: Mapped[str | None] = mapped_column(String(64))
    name: Mapped[str | None] = mapped_column(String(200))
    user_name: Mapped[str | None] = mapped_column(String(64))
    account: Mapped[str | None] = mapped_column(String(64))
    partition: Mapped[str | None] = mapped_column(String(64))
    state: Mapped[str] = mapped_column(String(32))
    native_state: Mapped[str] = mapped_column(String(64), default="")
    exit_code: Mapped[int | None]
    signal: Mapped[int | None]
    submit_time: Mapped[datetime]
    start_time: Mapped[datetime | None]
    end_time: Mapped[datetime | None]
    elapsed_seconds: Mapped[int] = mapped_column(BigInteger, default=0)
    alloc_cpus: Mapped[int] = mapped_column(default=0)
    alloc_mem_mb: Mapped[int] = mapped_column(BigInteger, default=0)
    alloc_gpus: Mapped[int] = mapped_column(default=0)
    total_cpu_seconds: Mapped[float | None] = mapped_column(Float)
    max_rss_mb: Mapped[int | None] = mapped_column(BigInteger)
    req_mem_mb: Mapped[int | None] = mapped_column(BigInteger)
    time_limit_seconds: Mapped[int | None] = mapped_column(BigInteger)
    ingested_at: Mapped[datetime] = mapped_column(default=utc_now)


class UsageDaily(Base):
    """Usage of finished jobs per cluster, account, user and partition on the day they ended."""

    __tablename__ = "usage_daily"
    __table_args__ = (
        UniqueConstraint("cluster", "account", "user_name", "partition", "day"),
        Index("ix_usage_daily_day_account", "day", "account"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    cluster: Mapped[str] = mapped_column(String(64))
    account: Mapped[str] = mapped_column(String(64))
    user_name: Mapped[str] = mapped_column(String(64))
    partition: Mapped[str] = mapped_column(String(64))
    day: Mapped[date] = mapped_column(Date)
    cpu_seconds: Mapped[int] = mapped_column(BigInteger, default=0)
    gpu_seconds: Mapped[int] = mapped_column(BigInteger, default=0)
    mem_mb_seconds: Mapped[int] = mapped_column(BigInteger, default=0)
    total_cpu_seconds: Mapped[float] = mapped_column(Float, default=0.0)
    req_mem_mb_sum: Mapped[int] = mapped_column(BigInteger, default=0)
    max_rss_mb_sum: Mapped[int] = mapped_column(BigInteger, default=0)
    jobs_total: Mapped[int] = mapped_column(default=0)
    jobs_completed: Mapped[int] = mapped_column(default=0)
    jobs_failed: Mapped[int] = mapped_column(default=0)
    jobs_cancelled: Mapped[int] = mapped_column(default=0)
    jobs_timeout: Mapped[int] = mapped_column(default=0)
    jobs_other: Mapped[int] = mapped_column(default=0)


class UsageIngestMark(Base):
    """How far accounting has been ingested for a cluster (the high-water mark)."""

    __tablename__ = "usage_ingest_marks"

    cluster: Mapped[str] = mapped_column(String(64), primary_key=True)
    window_end: Mapped[datetime]
    last_run_at: Mapped[datetime] = mapped_column(default=utc_now)
    last_job_count: Mapped[int] = mapped_column(default=0)


class AssociationLimit(Base):
    """A GrpTRESMins limit on an account (user empty) or on one user's association."""

    __tablename__ = "association_limits"
    __table_args__ = (UniqueConstraint("cluster", "account", "user_name", "tres"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    cluster: Mapped[str] = mapped_column(String(64))
    account: Mapped[str] = mapped_column(String(64))
    user_name: Mapped[str] = mapped_column(String(64), default="")
    tres: Mapped[str] = mapped_column(String(32))
    minutes: Mapped[int] = mapped_column(BigInteger)
    fetched_at: Mapped[datetime] = mapped_column(default=utc_now)
