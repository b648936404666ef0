"""``bhosts -w`` and ``bqueues -l`` as the nodes view's report."""

from __future__ import annotations

import re

from app.scheduler.lsf.long_form import unwrap
from app.scheduler.nodes import NodeInfo, NodesReport, NodeState, PartitionAccess

# bhosts' STATUS words; "closed" hosts are full (closed_Full), locked or down for the batch
# system, which only the native state tells apart.
_STATES = {
    "ok": NodeState.IDLE,
    "closed_Full": NodeState.ALLOCATED,
    "closed_Adm": NodeState.DRAINED,
    "closed_Lock": NodeState.DRAINED,
    "closed_Wind": NodeState.DRAINED,
    "closed_Excl": NodeState.ALLOCATED,
    "unavail": NodeState.DOWN,
    "unreach": NodeState.DOWN,
    "closed_LIM": NodeState.DOWN,
}


_COLUMNS = ("HOST_NAME", "STATUS", "JL/U", "MAX", "NJOBS", "RUN", "SSUSP", "USUSP", "RSV")


def parse_nodes_report(bhosts: str, bqueues: str) -> NodesReport:
    """One NodeInfo per host (slots as CPUs; OpenLava tracks no memory allocation) and one
    PartitionAccess per queue, each open to every user (USERS: all users)."""
    queues = tuple(re.findall(r"^QUEUE: (\S+)", unwrap(bqueues), re.MULTILINE))
    nodes = []
    for line in bhosts.splitlines()[1:]:
        words = line.split()
        if len(words) < 9:
            continue
        name, status, _, most, jobs = words[:5]
        slots = int(most) if most.isdigit() else 0
        used = int(jobs) if jobs.isdigit() else 0
        state = _STATES.get(status, NodeState.UNKNOWN)
        if state is NodeState.IDLE and used:
            state = NodeState.MIXED
        nodes.append(
            NodeInfo(
                name=name,
                state=state,
                native_state=status,
                partitions=queues,
                cpus_total=slots,
                cpus_allocated=min(used, slots),
                native=dict(
                    zip(("HOST_NAME", "STATUS", "JL/U", "MAX", "NJOBS"), words, strict=False)
                ),
            )
        )
    return NodesReport(tuple(nodes), tuple(PartitionAccess(name=q) for q in queues))
