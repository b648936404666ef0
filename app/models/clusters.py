"""Per-cluster poller bookkeeping: health of the last cycles and who holds the poll lease."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from app.models.base import Base, utc_now


class ClusterStatus(Base):
    __tablename__ = "cluster_status"

    cluster: Mapped[str] = mapped_column(String(64), primary_key=True)
    last_contact_at: Mapped[datetime | None]
    last_error: Mapped[str | None] = mapped_column(Text)
    consecutive_failures: Mapped[int] = mapped_column(default=0)
    calls_last_cycle: Mapped[int] = mapped_column(default=0)
    cycle_seconds: Mapped[float | None]
    # The partitions and their capacity as last reported (name, state, limits, nodes, CPUs).
    partitions: Mapped[list[dict[str, Any]] | None] = mapped_column(JSON)
    partitions_at: Mapped[datetime | None]
    # The nodes (state, resources allocated, features, reason) and the partitions' access
    # rules as last reported together; the nodes view reads only these (ADR 0025).
    nodes: Mapped[list[dict[str, Any]] | None] = mapped_column(JSON)
    node_partitions: Mapped[list[dict[str, Any]] | None] = mapped_column(JSON)
    nodes_at: Mapped[datetime | None]
    updated_at: Mapped[datetime] = mapped_column(default=utc_now, onupdate=utc_now)


class PollerLease(Base):
    """Only one poller process may poll a cluster at a time; the lease expires if it dies."""

    __tablename__ = "poller_leases"

    cluster: Mapped[str] = mapped_column(String(64), primary_key=True)
    holder: Mapped[str] = mapped_column(String(128))
    expires_at: Mapped[datetime]
