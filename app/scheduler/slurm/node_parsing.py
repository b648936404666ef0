"""Pure parsers for ``scontrol --oneliner`` records of partitions and nodes.

22.05, 24.11 and 26.05 print the same keys for what is read here (later versions add keys
such as ``ResumeAfterTime`` or rename ``ExclusiveUser``, which are kept in ``native`` only).
A record is ``Key=value`` pairs separated by spaces; values may hold spaces (``OS=Linux 6.1
#1 SMP``), so a pair ends where the next ``Key=`` begins. A node's ``Reason`` is free text
ending in ``[user@time]`` and is cut out first, so words with ``=`` in it stay its own.
"""

from __future__ import annotations

import re

from app.scheduler.nodes import NodeInfo, NodesReport, NodeState, PartitionAccess
from app.scheduler.slurm.parsing import is_absent, parse_tres

_PAIR = re.compile(r"(?:^|\s)([A-Za-z][A-Za-z0-9_]*)=")
_REASON = re.compile(r"\sReason=(?P<text>.*?)\s\[(?P<by>[^@\]\s]*)@(?P<at>[^\]\s]*)\]")
_BASE = {
    "IDLE": NodeState.IDLE,
    "MIXED": NodeState.MIXED,
    "ALLOCATED": NodeState.ALLOCATED,
    "ALLOC": NodeState.ALLOCATED,
    "COMPLETING": NodeState.COMPLETING,
    "DOWN": NodeState.DOWN,
    "ERROR": NodeState.DOWN,
    "FUTURE": NodeState.UNKNOWN,
}
_BUSY = frozenset({NodeState.MIXED, NodeState.ALLOCATED, NodeState.COMPLETING})
_POWER = frozenset({"POWERED_DOWN", "POWER_DOWN", "POWERING_UP", "CLOUD"})


def parse_record(line: str) -> dict[str, str]:
    """One oneliner record as its raw ``Key -> value`` pairs (values stripped)."""
    fields: dict[str, str] = {}
    reason = _REASON.search(line)
    if reason is not None:
        fields.update(Reason=reason["text"], ReasonUser=reason["by"], ReasonTime=reason["at"])
        line = line[: reason.start()] + line[reason.end() :]
    keys = list(_PAIR.finditer(line))
    for key, following in zip(keys, [*keys[1:], None], strict=True):
        end = following.start() if following is not None else len(line)
        fields.setdefault(key[1], line[key.end() : end].strip())
    return fields


def node_state(native: str) -> NodeState:
    """``IDLE+DRAIN`` -> drained, ``MIXED+DRAIN`` -> draining, ``DOWN*`` -> down, ..."""
    base, *flags = native.upper().rstrip("*~#!%$@^-").split("+")
    state = _BASE.get(base, NodeState.UNKNOWN)
    if state is NodeState.DOWN or "NOT_RESPONDING" in flags or native.endswith("*"):
        return NodeState.DOWN
    if "DRAIN" in flags or base in ("DRAINED", "DRAINING"):
        return NodeState.DRAINING if state in _BUSY or base == "DRAINING" else NodeState.DRAINED
    if "MAINTENANCE" in flags or "RESERVED" in flags or "MAINT" in flags:
        return NodeState.RESERVED
    if state is NodeState.IDLE and _POWER.intersection(flags):
        return NodeState.POWERED_DOWN
    return state


def _names(value: str | None) -> tuple[str, ...]:
    if is_absent(value) or value is None:
        return ()
    return tuple(item.strip() for item in value.split(",") if item.strip())


def _allow_list(value: str | None) -> tuple[str, ...] | None:
    """Slurm's ``ALL`` (or nothing set) admits everyone: None."""
    names = _names(value)
    return None if not names or "ALL" in names else names


def _int(value: str | None) -> int:
    return int(value) if value is not None and value.strip().isdigit() else 0


def to_node(fields: dict[str, str]) -> NodeInfo:
    """A node record in the canonical shape; the raw pairs are kept in ``native``."""
    configured = parse_tres(fields.get("CfgTRES"))
    allocated = parse_tres(fields.get("AllocTRES"))
    # CPUEfctv leaves out cores kept for the system (CoreSpecCount); older records lack it.
    total_cpus = fields.get("CPUEfctv") or fields.get("CPUTot")
    reason = fields.get("Reason")
    return NodeInfo(
        name=fields["NodeName"],
        state=node_state(fields.get("State", "")),
        native_state=fields.get("State", ""),
        partitions=_names(fields.get("Partitions")),
        cpus_total=_int(total_cpus),
        cpus_allocated=_int(fields.get("CPUAlloc")),
        memory_mb_total=_int(fields.get("RealMemory")),
        memory_mb_allocated=_int(fields.get("AllocMem")),
        gpus_total=configured.gpus or 0,
        gpus_allocated=allocated.gpus or 0,
        features=_names(fields.get("AvailableFeatures")),
        reason=None if is_absent(reason) else reason,
        native=fields,
    )


def to_partition(fields: dict[str, str]) -> PartitionAccess:
    """A partition record's access rules; the raw pairs are kept in ``native``."""
    return PartitionAccess(
        name=fields["PartitionName"],
        is_up=fields.get("State", "UP").upper() == "UP",
        allow_accounts=_allow_list(fields.get("AllowAccounts")),
        deny_accounts=_names(fields.get("DenyAccounts")),
        allow_groups=_allow_list(fields.get("AllowGroups")),
        native=fields,
    )


def parse_nodes_report(text: str) -> NodesReport:
    """Parse ``nodes_argv()`` fed ``NODES_REQUESTS``: scontrol's echo of each request and
    blank lines are skipped; a record is recognised by its first key."""
    nodes: list[NodeInfo] = []
    partitions: list[PartitionAccess] = []
    for line in text.splitlines():
        if line.startswith("NodeName="):
            nodes.append(to_node(parse_record(line)))
        elif line.startswith("PartitionName="):
            partitions.append(to_partition(parse_record(line)))
    return NodesReport(tuple(nodes), tuple(partitions))
