"""pytest-xdist scheduling by group: a cluster's tests in one worker, one after another.

pytest-xdist's own ``--dist loadgroup`` names an item's group by appending ``@group`` to its
node id, which pytest 9 no longer lets a plugin change (the id is a structured ``NodeId``), so
every test would be its own unit and two workers could share a cluster. Here the workers, which
collect, write each grouped item's group to a file named by the controller; the controller's
scheduler, which only sees node ids, reads it once the workers have collected and hands each
group to one worker as one unit, the largest first, and every other test on its own.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

import pytest
from xdist.scheduler.loadscope import LoadScopeScheduling

from tests.lanes import group_of

FILE_KEY = "portal_lane_groups"


def groups_file(config: pytest.Config) -> Path:
    """The controller's file of groups (one per run: the controller's pid)."""
    return Path(tempfile.gettempdir()) / f"pytest-lane-groups-{os.getpid()}.json"


def configure_node(node: Any) -> None:
    """Controller: tell each worker where to write the groups."""
    node.workerinput[FILE_KEY] = str(groups_file(node.config))


def write_groups(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Worker: write {node id: group} for the items that have a group."""
    workerinput = getattr(config, "workerinput", None)
    if workerinput is None or FILE_KEY not in workerinput:
        return
    groups = {item.nodeid: group for item in items if (group := group_of(item)) is not None}
    target = Path(workerinput[FILE_KEY])
    # Every worker collects the same items; a rename keeps a reader from a half-written file.
    partial = target.with_name(f"{target.name}.{workerinput['workerid']}")
    partial.write_text(json.dumps(groups))
    partial.replace(target)


class GroupScheduling(LoadScopeScheduling):
    """LoadScopeScheduling whose scope is the item's group, or the item itself."""

    def __init__(self, config: pytest.Config, log: Any = None) -> None:
        super().__init__(config, log)
        self.groups_path = groups_file(config)
        self.groups: dict[str, str] | None = None

    def _split_scope(self, nodeid: str) -> str:
        if self.groups is None:
            # Called only once every worker has collected, so the file is complete.
            self.groups = json.loads(self.groups_path.read_text())
            self.groups_path.unlink(missing_ok=True)
        return self.groups.get(nodeid, nodeid)
