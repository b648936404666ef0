"""Preflight reuses associations and partitions for a minute, but never refuses on stale ones."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from app.scheduler.config import ClusterConfig
from app.scheduler.slurm.adapter import SlurmAdapter
from app.scheduler.slurm.ssh import CommandResult
from app.scheduler.types import JobSpec
from tests.unit.scheduler.conftest import Recorded

CONFIG = ClusterConfig(
    name="testcluster",
    transport="ssh",
    login_host="127.0.0.1",
    login_port=2222,
    service_user="hpcsvc",
    service_key="/dev/null",
    user_ca_key="/dev/null",
)
SPEC = JobSpec(
    script="#!/bin/bash\ntrue\n",
    account="physics",
    partition="debug",
    time_limit=10,
    stdout="/scratch/alice/logs/out-%j.txt",
)


class ScriptedSsh:
    """Answers each command from recorded outputs and remembers what was run."""

    def __init__(self, recorded: Recorded) -> None:
        self.answers = {
            "sacctmgr": recorded.text("sacctmgr-assoc-alice.txt"),
            "sinfo": recorded.text("sinfo.txt"),
        }
        self.commands: list[str] = []

    async def run(self, argv: Sequence[str], **options: Any) -> CommandResult:
        program = next(arg for arg in argv if not arg.startswith("TZ=") and arg != "env")
        self.commands.append(program)
        return CommandResult(0, self.answers.get(program, "").encode(), "")


def adapter_with(ssh: ScriptedSsh) -> SlurmAdapter:
    return SlurmAdapter(CONFIG, ssh)  # type: ignore[arg-type]


async def test_second_preflight_skips_the_association_and_partition_lookups(
    recorded: Recorded,
) -> None:
    ssh = ScriptedSsh(recorded)
    adapter = adapter_with(ssh)
    await adapter.preflight(SPEC, "alice")
    first = list(ssh.commands)
    await adapter.preflight(SPEC, "alice")
    assert first.count("sacctmgr") == 1 and first.count("sinfo") == 1
    assert ssh.commands[len(first) :] == ["sh", "sbatch"]


async def test_an_account_missing_from_the_cached_list_is_looked_up_again(
    recorded: Recorded,
) -> None:
    ssh = ScriptedSsh(recorded)
    adapter = adapter_with(ssh)
    await adapter.preflight(SPEC, "alice")
    ssh.answers["sacctmgr"] += "chemistry||normal\n"
    await adapter.preflight(JobSpec(**{**_fields(SPEC), "account": "chemistry"}), "alice")
    assert ssh.commands.count("sacctmgr") == 2


def _fields(spec: JobSpec) -> dict[str, Any]:
    return {name: getattr(spec, name) for name in spec.__dataclass_fields__}
