"""Nodes and partitions' access rules as kept in ``cluster_status`` (JSON) and read back."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from app.scheduler.nodes import NodeInfo, NodesReport, NodeState, PartitionAccess

_NODE_FIGURES = (
    "cpus_total",
    "cpus_allocated",
    "memory_mb_total",
    "memory_mb_allocated",
    "gpus_total",
    "gpus_allocated",
)


def node_record(node: NodeInfo) -> dict[str, Any]:
    """A node as stored: the canonical fields, without the raw ones (the view needs none)."""
    record: dict[str, Any] = {
        "name": node.name,
        "state": node.state.value,
        "native_state": node.native_state,
        "partitions": list(node.partitions),
        "features": list(node.features),
        "reason": node.reason,
    }
    record.update({name: getattr(node, name) for name in _NODE_FIGURES})
    return record


def partition_record(partition: PartitionAccess) -> dict[str, Any]:
    def listed(names: tuple[str, ...] | None) -> list[str] | None:
        return None if names is None else list(names)

    return {
        "name": partition.name,
        "is_up": partition.is_up,
        "allow_accounts": listed(partition.allow_accounts),
        "deny_accounts": list(partition.deny_accounts),
        "allow_groups": listed(partition.allow_groups),
    }


def _state(value: Any) -> NodeState:
    try:
        return NodeState(value)
    except ValueError:
        return NodeState.UNKNOWN


def node_from(record: dict[str, Any]) -> NodeInfo:
    def figure(name: str) -> int:
        return int(record.get(name) or 0)

    return NodeInfo(
        name=str(record["name"]),
        state=_state(record.get("state")),
        native_state=str(record.get("native_state") or ""),
        partitions=tuple(record.get("partitions") or ()),
        cpus_total=figure("cpus_total"),
        cpus_allocated=figure("cpus_allocated"),
        memory_mb_total=figure("memory_mb_total"),
        memory_mb_allocated=figure("memory_mb_allocated"),
        gpus_total=figure("gpus_total"),
        gpus_allocated=figure("gpus_allocated"),
        features=tuple(record.get("features") or ()),
        reason=record.get("reason"),
    )


def partition_from(record: dict[str, Any]) -> PartitionAccess:
    def listed(value: Any) -> tuple[str, ...] | None:
        return None if value is None else tuple(value)

    return PartitionAccess(
        name=str(record["name"]),
        is_up=bool(record.get("is_up", True)),
        allow_accounts=listed(record.get("allow_accounts")),
        deny_accounts=tuple(record.get("deny_accounts") or ()),
        allow_groups=listed(record.get("allow_groups")),
    )


def report_from(
    nodes: Iterable[dict[str, Any]] | None, partitions: Iterable[dict[str, Any]] | None
) -> NodesReport:
    return NodesReport(
        tuple(node_from(n) for n in nodes or ()),
        tuple(partition_from(p) for p in partitions or ()),
    )
