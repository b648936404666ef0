"""Preflight reuses associations and partitions for a minute, but never refuses on stale ones;
it asks for the log folders and sbatch's own verdict at once."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

import pytest

from app.scheduler.config import ClusterConfig
from app.scheduler.errors import PreflightFailed
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


class SlowSsh(ScriptedSsh):
    """Each command takes 50 ms; remembers how many ran at once at most."""

    def __init__(self, recorded: Recorded, failing: str = "") -> None:
        super().__init__(recorded)
        self.failing = failing
        self.running = self.most_at_once = 0

    async def run(self, argv: Sequence[str], **options: Any) -> CommandResult:
        self.running += 1
        self.most_at_once = max(self.most_at_once, self.running)
        await asyncio.sleep(0.05)
        self.running -= 1
        program = next(arg for arg in argv if not arg.startswith("TZ=") and arg != "env")
        if program == self.failing == "sh":
            return CommandResult(0, b"/scratch/alice/logs\n", "")
        if program == self.failing == "sbatch":
            return CommandResult(1, b"", "sbatch: error: Invalid qos specification")
        return await super().run(argv, **options)


async def test_log_folders_and_sbatch_test_only_are_asked_at_once(recorded: Recorded) -> None:
    ssh = SlowSsh(recorded)
    adapter = adapter_with(ssh)
    await adapter.preflight(SPEC, "alice")  # fills the association and partition caches
    ssh.commands.clear()
    ssh.most_at_once = 0
    await adapter.preflight(SPEC, "alice")
    assert sorted(ssh.commands) == ["sbatch", "sh"] and ssh.most_at_once == 2


async def test_a_folder_that_cannot_be_made_is_reported_before_sbatchs_verdict(
    recorded: Recorded,
) -> None:
    adapter = adapter_with(SlowSsh(recorded, failing="sh"))
    with pytest.raises(PreflightFailed) as caught:
        await adapter.preflight(SPEC, "alice")
    assert caught.value.problems == [
        ("stdout", "directory /scratch/alice/logs cannot be created or is not writable")
    ]
    assert caught.value.raw == ""
    adapter = adapter_with(SlowSsh(recorded, failing="sbatch"))
    with pytest.raises(PreflightFailed) as caught:
        await adapter.preflight(SPEC, "alice")
    assert caught.value.raw == "sbatch: error: Invalid qos specification"


async def test_before_a_submission_preflight_asks_nothing_the_submission_will_answer(
    recorded: Recorded,
) -> None:
    ssh = ScriptedSsh(recorded)
    adapter = adapter_with(ssh)
    await adapter.preflight(SPEC, "alice", ask_sbatch=False)
    assert sorted(ssh.commands) == ["sacctmgr", "sinfo"]  # no folders, no --test-only
    ssh.commands.clear()
    await adapter.preflight(SPEC, "alice", ask_sbatch=False)
    assert ssh.commands == []
    with pytest.raises(PreflightFailed) as caught:
        await adapter.preflight(_with(partition="gpu-a100"), "alice", ask_sbatch=False)
    assert [field for field, _message in caught.value.problems] == ["partition"]
    assert "sh" not in ssh.commands and "sbatch" not in ssh.commands


def _with(**changes: Any) -> JobSpec:
    return JobSpec(**{**_fields(SPEC), **changes})
