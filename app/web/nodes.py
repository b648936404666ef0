"""/clusters/{cluster}/nodes: where the signed-in user's job can run now, per node."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from babel.numbers import format_decimal
from fastapi import APIRouter, Query, Request
from fastapi.responses import Response

from app import i18n
from app.deps import ClusterNamesDep, SessionDep
from app.i18n import _
from app.nodes.service import NodesView, nodes_view
from app.scheduler.nodes import NodeInfo, NodeState
from app.web.auth import CurrentUser, WebContextDep
from app.web.jobs_fragments import format_time
from app.web.views import page

router = APIRouter(include_in_schema=False)

_TONES = {
    NodeState.IDLE: "ok",
    NodeState.MIXED: "active",
    NodeState.POWERED_DOWN: "neutral",
    NodeState.ALLOCATED: "waiting",
    NodeState.COMPLETING: "waiting",
    NodeState.RESERVED: "waiting",
    NodeState.DRAINING: "bad",
    NodeState.DRAINED: "bad",
    NodeState.DOWN: "bad",
}


def state_labels() -> dict[NodeState, str]:
    """Each node state in the reader's language."""
    return {
        NodeState.IDLE: _("idle"),
        NodeState.MIXED: _("partly used"),
        NodeState.ALLOCATED: _("fully used"),
        NodeState.COMPLETING: _("finishing jobs"),
        NodeState.DRAINING: _("draining"),
        NodeState.DRAINED: _("drained"),
        NodeState.DOWN: _("down"),
        NodeState.RESERVED: _("reserved"),
        NodeState.POWERED_DOWN: _("powered down, starts on demand"),
        NodeState.UNKNOWN: _("unknown"),
    }


@dataclass(frozen=True, slots=True)
class NodeRow:
    name: str
    state: str
    tone: str
    native_state: str
    partitions: str
    cpus: str
    memory: str
    gpus: str
    features: str
    reason: str | None


def _gib(mb: int) -> str:
    return format_decimal(mb / 1024, format="#,##0.0", locale=i18n.current_locale())


def node_row(node: NodeInfo, labels: dict[NodeState, str]) -> NodeRow:
    return NodeRow(
        name=node.name,
        state=labels[node.state],
        tone=_TONES.get(node.state, "neutral"),
        native_state=node.native_state,
        partitions=", ".join(node.partitions),
        cpus=_("%(idle)s of %(total)s", idle=node.cpus_idle, total=node.cpus_total),
        memory=_(
            "%(idle)s of %(total)s GiB",
            idle=_gib(node.memory_mb_idle),
            total=_gib(node.memory_mb_total),
        ),
        gpus=_("%(idle)s of %(total)s", idle=node.gpus_idle, total=node.gpus_total)
        if node.gpus_total
        else "—",
        features=", ".join(node.features) or "—",
        reason=node.reason,
    )


def _summary(view: NodesView) -> str:
    ready = [n for n in view.nodes if n.state.takes_jobs and n.cpus_idle > 0]
    return _(
        "Nodes that can start a job now: %(ready)s of %(total)s, with %(cpus)s CPUs and "
        "%(gpus)s GPUs idle.",
        ready=len(ready),
        total=len(view.nodes),
        cpus=sum(n.cpus_idle for n in ready),
        gpus=sum(n.gpus_idle for n in ready),
    )


@router.get("/clusters/{cluster}/nodes", name="cluster_nodes")
async def nodes_page(
    request: Request,
    actor: CurrentUser,
    web: WebContextDep,
    session: SessionDep,
    names: ClusterNamesDep,
    cluster: str,
    partition: Annotated[str | None, Query(max_length=64)] = None,
    available: bool = False,
) -> Response:
    view = await nodes_view(
        session, actor, cluster, names, partition=partition or None, available_only=available
    )
    labels = state_labels()
    context = {
        "view": view,
        "clusters": names,
        "rows": [node_row(n, labels) for n in view.nodes],
        "summary": _summary(view),
        "read_at": format_time(view.read_at),
    }
    return page(request, web, "nodes/index.html", context)
