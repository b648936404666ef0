"""Which lane a test is in, and which pytest-xdist group keeps it off another test's cluster."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.lanes import TESTS, group_of, lane_of


@dataclass
class Params:
    params: dict[str, Any]


@dataclass
class FakeItem:
    path: Path
    markers: set[str] = field(default_factory=set)
    callspec: Params = field(default_factory=lambda: Params({}))

    def get_closest_marker(self, name: str) -> object | None:
        return name if name in self.markers else None


def item(path: str, *markers: str, **params: str) -> Any:
    return FakeItem(TESTS / path, set(markers), Params(dict(params)))


@pytest.mark.parametrize(
    ("test", "lane", "group"),
    [
        (item("unit/test_x.py"), "unit", None),
        (item("integration/web/test_x.py"), "db", None),
        (item("contract/test_x.py", "slurm", slurm_version="26.05"), "slurm", "slurm-26.05"),
        # The LSF cluster's tests run in a worker of their own, beside the Slurm versions'.
        (item("contract/test_lsf_contract.py", "lsf"), "slurm", "lsf"),
        # A site cluster is a cluster of its own: its tests run beside the single-node one's.
        (
            item("integration/site/test_x.py", "slurm", slurm_version="22.05-site"),
            "slurm",
            "slurm-22.05-site",
        ),
        # Marked slurm without a version: the host's cluster.
        (item("security/test_x.py", "slurm"), "slurm", "slurm-22.05"),
        # A version parameter alone puts a test on that version's cluster.
        (item("integration/files/test_x.py", slurm_version="24.11"), "slurm", "slurm-24.11"),
        (item("e2e/test_x.py", "browser", "slurm"), "browser", "slurm-22.05"),
        # One test on every version's cluster at once: after the others, by itself.
        (
            item("integration/clusters/test_x.py", "slurm", "all_clusters"),
            "alone",
            "slurm-22.05",
        ),
        (item("e2e/test_x.py", "browser"), "browser", "browser"),
        # The PBS cluster is a cluster of its own, in a group of its own.
        (item("contract/test_pbs_contract.py", "pbs"), "slurm", "pbs"),
        (item("faults/test_x.py", "slurm"), "faults", "slurm-22.05"),
        (item("security/test_x.py", "alone"), "alone", None),
        # The compose stack brings its own cluster: no dev cluster's group.
        (item("compose/test_x.py"), "compose", None),
        (item("faults/test_x.py", "slurm", "alone"), "alone", "slurm-22.05"),
        # Reading a cluster without running jobs on it needs no turn in its group.
        (item("load/test_x.py", "slurm", "no_jobs"), "slurm", None),
        (item("e2e/test_x.py", "browser", "slurm", "no_jobs"), "browser", "browser"),
    ],
)
def test_each_test_has_a_lane_and_each_cluster_a_group(
    test: Any, lane: str, group: str | None
) -> None:
    assert lane_of(test) == lane
    assert group_of(test) == group
