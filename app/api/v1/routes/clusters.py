from __future__ import annotations

from datetime import timedelta
from typing import Annotated

from fastapi import APIRouter, Query

from app.api.v1.cluster_schemas import (
    AssociationOut,
    ClusterDetailOut,
    ClusterOut,
    PartitionOut,
    capabilities_out,
)
from app.api.v1.deps import Reader, adapter_for
from app.api.v1.node_schemas import NodesOut, nodes_out
from app.api.v1.schemas import errors
from app.api.v1.storage_schemas import DiskUsageOut, disk_usage_out
from app.deps import ClusterNamesDep, DiskUsageServiceDep, RegistryDep, SessionDep
from app.errors import NotFound
from app.nodes.service import nodes_view
from app.scheduler.base import SchedulerAdapter
from app.scheduler.capabilities import capabilities_of
from app.scheduler.types import PartitionInfo

router = APIRouter(prefix="/clusters", tags=["clusters"])


def _minutes(value: timedelta | None) -> int | None:
    return None if value is None else int(value.total_seconds() // 60)


def partition_out(partition: PartitionInfo) -> PartitionOut:
    return PartitionOut(
        name=partition.name,
        is_default=partition.is_default,
        state=partition.state,
        max_time_minutes=_minutes(partition.max_time),
        default_time_minutes=_minutes(partition.default_time),
        total_nodes=partition.total_nodes,
        idle_nodes=partition.idle_nodes,
        total_cpus=partition.total_cpus,
        idle_cpus=partition.idle_cpus,
    )


@router.get(
    "",
    response_model=list[ClusterOut],
    summary="Configured clusters",
    responses=errors(takes_input=False),
)
async def list_clusters(
    names: ClusterNamesDep, registry: RegistryDep, principal: Reader
) -> list[ClusterOut]:
    return [
        _cluster_out(name, principal.actor.username_on(name), adapter_for(registry, name))
        for name in names
    ]


def _cluster_out(name: str, username: str | None, adapter: SchedulerAdapter) -> ClusterOut:
    capabilities = capabilities_of(adapter)
    return ClusterOut(
        name=name,
        username=username,
        scheduler=capabilities.scheduler,
        capabilities=capabilities_out(capabilities),
    )


@router.get(
    "/{cluster}",
    response_model=ClusterDetailOut,
    summary="Partitions and your associations, asked of the cluster now",
    responses=errors(404, 503),
)
async def get_cluster(
    names: ClusterNamesDep, registry: RegistryDep, principal: Reader, cluster: str
) -> ClusterDetailOut:
    if cluster not in names:
        raise NotFound(f"No cluster named {cluster}.")
    adapter = adapter_for(registry, cluster)
    username = principal.actor.username_on(cluster)
    # SchedulerUnavailable propagates to the API's handler and becomes a 503.
    partitions = await adapter.partitions()
    associations = await adapter.associations(username) if username else []
    return ClusterDetailOut(
        **_cluster_out(cluster, username, adapter).model_dump(),
        partitions=[partition_out(p) for p in partitions],
        associations=[
            AssociationOut(account=a.account, partition=a.partition, qos=list(a.qos))
            for a in associations
        ],
    )


@router.get(
    "/{cluster}/disk-usage",
    response_model=DiskUsageOut,
    summary="Your disk usage and quotas on the cluster's filesystems",
    description="Measured by the site's command run as you on the login node, and kept for "
    "a minute. 404 when the cluster does not report disk usage or you have no account on it; "
    "503, with the command's own words, when it fails.",
    responses=errors(404, 503),
)
async def get_disk_usage(
    service: DiskUsageServiceDep, principal: Reader, cluster: str
) -> DiskUsageOut:
    return disk_usage_out(await service.disk_usage(principal.actor, cluster))


@router.get(
    "/{cluster}/nodes",
    response_model=NodesOut,
    summary="Nodes of the partitions you may use: state, CPUs, memory and GPUs free",
    description="As the poller last read them (read_at), never asked of the cluster on "
    "request. partition narrows to one partition open to you; available to nodes that "
    "take jobs and have an idle CPU. 404 for an unknown cluster or a partition not open to you.",
    responses=errors(404),
)
async def get_nodes(
    session: SessionDep,
    names: ClusterNamesDep,
    principal: Reader,
    cluster: str,
    partition: Annotated[str | None, Query(max_length=64)] = None,
    available: bool = False,
) -> NodesOut:
    view = await nodes_view(
        session, principal.actor, cluster, names, partition=partition, available_only=available
    )
    return nodes_out(view)
