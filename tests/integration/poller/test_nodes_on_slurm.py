"""The poller reads the nodes from each real Slurm version in one call, and the nodes view
shows what a running job of alice's holds (on PostgreSQL, ADR 0018)."""

from __future__ import annotations

from typing import Any

import pytest

from app.jobs import states
from app.models.clusters import ClusterStatus
from app.nodes.service import nodes_view
from app.poller.cycle import CycleWork, poll_cluster_once
from app.scheduler.base import SchedulerAdapter
from app.scheduler.nodes import NodesReport
from tests.integration.poller.conftest import Portal

pytestmark = pytest.mark.slurm


class NodesCalls:
    """The adapter, counting its ``nodes`` calls."""

    def __init__(self, inner: SchedulerAdapter) -> None:
        self.inner = inner
        self.calls = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    async def nodes(self) -> NodesReport:
        self.calls += 1
        return await self.inner.nodes()


async def test_a_running_jobs_cpu_and_memory_show_as_allocated_on_its_node(
    portal: Portal,
) -> None:
    request = portal.request("#!/bin/bash\nsleep 60\n", name="nodes-view")
    job = await portal.service.submit(portal.alice, request)
    running = await portal.poll_until(job.id, lambda row: row.state == "running", timeout=90)
    assert running.node_list

    counted = NodesCalls(portal.adapter)
    result = await poll_cluster_once(
        portal.sessionmaker, portal.cluster, counted, work=CycleWork(nodes=True)
    )
    # Beside the queue, the cycle may ask accounting about alice's jobs from other tests.
    assert result.is_ok and counted.calls == 1 and result.calls >= 2

    async with portal.sessionmaker() as session:
        status = await session.get(ClusterStatus, portal.cluster)
        assert status is not None and status.nodes_at is not None
        view = await nodes_view(session, portal.alice, portal.cluster, [portal.cluster])
    assert {"debug", "long"} <= set(view.partitions)
    node = next(n for n in view.nodes if n.name == running.node_list)
    # Other tests' jobs may share the node: at least this job's share is allocated.
    assert node.cpus_total >= 1 and node.cpus_allocated >= 1
    assert node.memory_mb_allocated >= 100 and node.memory_mb_total > node.memory_mb_allocated
    assert node.state.value in ("mixed", "allocated")
    await portal.service.cancel(portal.alice, job.id)
    await portal.poll_until(job.id, lambda row: states.is_terminal(row.state), timeout=60)
