"""The nodes view's parser on scontrol output recorded from 22.05, 24.11 and 26.05 (a job of
one CPU, 512 MiB and one GPU running on the only node)."""

from __future__ import annotations

import pytest

from app.scheduler.nodes import NodeState, PartitionAccess
from app.scheduler.slurm.node_parsing import node_state, parse_nodes_report, parse_record


def test_recorded_node_shows_what_is_allocated_and_what_is_idle(recorded) -> None:
    report = parse_nodes_report(recorded.text("scontrol-nodes.txt"))
    [node] = report.nodes
    assert node.name == "vm"
    assert node.state is NodeState.MIXED and node.native_state == "MIXED"
    assert node.partitions == ("debug", "long")
    assert (node.cpus_total, node.cpus_allocated, node.cpus_idle) == (2, 1, 1)
    assert (node.memory_mb_total, node.memory_mb_allocated) == (21694, 512)
    assert (node.gpus_total, node.gpus_allocated, node.gpus_idle) == (2, 1, 1)
    assert node.features == () and node.reason is None
    # Raw fields stay reachable, with the version's own keys.
    assert node.native["Version"].startswith(recorded.version)
    assert node.native["OS"].startswith("Linux ")


def test_recorded_partitions_are_open_to_every_account(recorded) -> None:
    report = parse_nodes_report(recorded.text("scontrol-nodes.txt"))
    assert [p.name for p in report.partitions] == ["debug", "long"]
    for partition in report.partitions:
        assert partition.is_up
        assert partition.allow_accounts is None and partition.allow_groups is None
        assert partition.deny_accounts == ()
        assert partition.admits(["physics"], ["alice"])


def test_a_drained_nodes_reason_keeps_its_words(recorded) -> None:
    # The recorded line, with the state and reason slurmctld prints for `scontrol update
    # nodename=vm state=drain reason=...` (the shared dev node is never drained for a test).
    line = next(
        row for row in recorded.text("scontrol-nodes.txt").splitlines() if row.startswith("Node")
    )
    drained = line.replace("State=MIXED", "State=IDLE+DRAIN").rstrip() + (
        " Reason=DIMM B2 failed, swap=yes [root@2026-11-27T16:50:01]"
    )
    [node] = parse_nodes_report(drained).nodes
    assert node.state is NodeState.DRAINED
    assert node.reason == "DIMM B2 failed, swap=yes"
    assert node.native["ReasonUser"] == "root"
    assert node.native["CfgTRES"].startswith("cpu=2,")


@pytest.mark.parametrize(
    ("native", "state"),
    [
        ("IDLE", NodeState.IDLE),
        ("MIXED", NodeState.MIXED),
        ("ALLOCATED", NodeState.ALLOCATED),
        ("IDLE+DRAIN", NodeState.DRAINED),
        ("MIXED+DRAIN", NodeState.DRAINING),
        ("ALLOCATED+DRAIN", NodeState.DRAINING),
        ("DOWN+NOT_RESPONDING", NodeState.DOWN),
        ("IDLE+NOT_RESPONDING", NodeState.DOWN),
        ("IDLE*", NodeState.DOWN),
        ("DOWN+DRAIN", NodeState.DOWN),
        ("IDLE+MAINTENANCE+RESERVED", NodeState.RESERVED),
        ("IDLE+RESERVED", NodeState.RESERVED),
        ("IDLE+CLOUD+POWERED_DOWN", NodeState.POWERED_DOWN),
        ("COMPLETING", NodeState.COMPLETING),
        ("FUTURE", NodeState.UNKNOWN),
        ("", NodeState.UNKNOWN),
    ],
)
def test_node_states(native: str, state: NodeState) -> None:
    assert node_state(native) is state


def test_values_with_spaces_end_at_the_next_key() -> None:
    fields = parse_record("NodeName=n1 OS=Linux 6.1 #1 SMP @0  RealMemory=100 Partitions=a,b ")
    assert fields == {
        "NodeName": "n1",
        "OS": "Linux 6.1 #1 SMP @0",
        "RealMemory": "100",
        "Partitions": "a,b",
    }


def test_partition_access_rules() -> None:
    restricted = parse_nodes_report(
        "PartitionName=gpu AllowGroups=ALL AllowAccounts=physics,bio DenyAccounts=(null) "
        "State=UP\n"
        "PartitionName=open AllowGroups=ALL AllowAccounts=ALL DenyAccounts=chemistry State=UP\n"
        "PartitionName=staff AllowGroups=admins,physics AllowAccounts=ALL State=DOWN\n"
    ).partitions
    gpu, open_, staff = restricted
    assert gpu.allow_accounts == ("physics", "bio") and gpu.deny_accounts == ()
    assert gpu.admits(["physics"], ["alice"]) and not gpu.admits(["chemistry"], ["bob"])
    assert open_.admits(["physics"], ["alice"]) and not open_.admits(["chemistry"], ["bob"])
    assert not staff.is_up and staff.allow_groups == ("admins", "physics")
    # The group named after the project's account lets its members in.
    assert staff.admits(["physics"], ["alice"]) and not staff.admits(["chemistry"], ["bob"])
    assert not PartitionAccess("any").admits([], ["alice"])


def test_the_site_clusters_two_compute_nodes_one_holding_a_job(recorded_2205) -> None:
    # Recorded on the 22.05 site cluster (a login node, two compute nodes in namespaces)
    # while a job of 1 CPU and 500 MiB ran on the first node.
    report = parse_nodes_report(recorded_2205.text("scontrol-nodes-site.txt"))
    first, second = report.nodes
    assert (first.name, first.state, first.cpus_idle) == ("sitenode1", NodeState.MIXED, 1)
    assert (first.memory_mb_total, first.memory_mb_allocated) == (3000, 500)
    assert (second.name, second.state, second.cpus_idle) == ("sitenode2", NodeState.IDLE, 2)
    assert second.native["NodeAddr"] == "10.77.0.130" and second.gpus_total == 0
    assert [p.native["Nodes"] for p in report.partitions] == ["sitenode[1-2]"] * 2
