"""Body of GET /api/v1/clusters/{cluster}/nodes, from the nodes service's view."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, Field

from app.nodes.service import NodesView
from app.scheduler.nodes import NodeInfo, NodeState


class ResourceOut(BaseModel):
    total: int
    allocated: int
    idle: int


class NodeOut(BaseModel):
    name: str
    state: NodeState = Field(
        description="What the node means for a new job; idle and mixed (and powered_down, "
        "which boots on demand) take jobs."
    )
    native_state: str = Field(description="Slurm's own state and flags, e.g. IDLE+DRAIN.")
    takes_jobs: bool
    partitions: list[str]
    cpus: ResourceOut
    memory_mb: ResourceOut
    gpus: ResourceOut
    features: list[str]
    reason: str | None = Field(description="Why the node is drained or down, as the admin wrote.")


class NodesOut(BaseModel):
    cluster: str
    read_at: datetime | None = Field(
        description="When the poller last read the nodes; null until it has."
    )
    partitions: list[str] = Field(description="The partitions you may submit to.")
    nodes: list[NodeOut] = Field(description="The nodes of those partitions (as filtered).")


def node_out(node: NodeInfo) -> NodeOut:
    return NodeOut(
        name=node.name,
        state=node.state,
        native_state=node.native_state,
        takes_jobs=node.state.takes_jobs,
        partitions=list(node.partitions),
        cpus=ResourceOut(total=node.cpus_total, allocated=node.cpus_allocated, idle=node.cpus_idle),
        memory_mb=ResourceOut(
            total=node.memory_mb_total,
            allocated=node.memory_mb_allocated,
            idle=node.memory_mb_idle,
        ),
        gpus=ResourceOut(total=node.gpus_total, allocated=node.gpus_allocated, idle=node.gpus_idle),
        features=list(node.features),
        reason=node.reason,
    )


def nodes_out(view: NodesView) -> NodesOut:
    return NodesOut(
        cluster=view.cluster,
        read_at=view.read_at,
        partitions=list(view.partitions),
        nodes=[node_out(n) for n in view.nodes],
    )
