"""Compute nodes and who may use the partitions they are in: value objects for the nodes view.

Each keeps the scheduler's raw fields in ``native`` (as ``JobInfo`` does), so a caller can reach
what these classes do not model without another scheduler call.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field


class NodeState(enum.StrEnum):
    """What a node means for a new job, from Slurm's base state and flags."""

    IDLE = "idle"
    MIXED = "mixed"
    ALLOCATED = "allocated"
    COMPLETING = "completing"
    DRAINING = "draining"  # still runs its jobs, takes no new ones
    DRAINED = "drained"
    DOWN = "down"
    RESERVED = "reserved"  # held for a reservation or maintenance
    POWERED_DOWN = "powered_down"
    UNKNOWN = "unknown"

    @property
    def takes_jobs(self) -> bool:
        """Whether a job may start here now (given free resources)."""
        return self in (NodeState.IDLE, NodeState.MIXED, NodeState.POWERED_DOWN)


@dataclass(frozen=True, slots=True)
class NodeInfo:
    """One compute node as the scheduler last reported it."""

    name: str
    state: NodeState
    native_state: str = ""
    partitions: tuple[str, ...] = ()
    cpus_total: int = 0
    cpus_allocated: int = 0
    memory_mb_total: int = 0
    memory_mb_allocated: int = 0
    gpus_total: int = 0
    gpus_allocated: int = 0
    features: tuple[str, ...] = ()
    reason: str | None = None
    native: Mapping[str, str] = field(default_factory=dict)

    @property
    def cpus_idle(self) -> int:
        return max(0, self.cpus_total - self.cpus_allocated)

    @property
    def memory_mb_idle(self) -> int:
        return max(0, self.memory_mb_total - self.memory_mb_allocated)

    @property
    def gpus_idle(self) -> int:
        return max(0, self.gpus_total - self.gpus_allocated)


@dataclass(frozen=True, slots=True)
class PartitionAccess:
    """Who may submit to a partition. ``None`` in an allow list means everyone (Slurm's ALL)."""

    name: str
    is_up: bool = True
    allow_accounts: tuple[str, ...] | None = None
    deny_accounts: tuple[str, ...] = ()
    allow_groups: tuple[str, ...] | None = None
    native: Mapping[str, str] = field(default_factory=dict)

    def admits(self, accounts: Iterable[str], names: Iterable[str]) -> bool:
        """Whether someone charging one of ``accounts`` may submit here.

        ``names`` stands in for the user's Unix groups, which the portal does not know: the
        cluster username and the project accounts, as sites commonly name a project's group
        after its account. A partition closed to every one of them is left out.
        """
        usable = [a for a in accounts if a not in self.deny_accounts]
        if self.allow_accounts is not None:
            usable = [a for a in usable if a in self.allow_accounts]
        if not usable:
            return False
        if self.allow_groups is None:
            return True
        return any(n in self.allow_groups for n in (*names, *usable))


@dataclass(frozen=True, slots=True)
class NodesReport:
    """Every node and every partition's access rules, read in one scheduler call."""

    nodes: tuple[NodeInfo, ...] = ()
    partitions: tuple[PartitionAccess, ...] = ()
