"""LsfAdapter on a scripted transport: one command per listing, LSF's answers read as such."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from app.scheduler.config import ClusterConfig
from app.scheduler.errors import (
    JobNotFound,
    PreflightFailed,
    RejectKind,
    SchedulerUnavailable,
    SubmitRejected,
)
from app.scheduler.lsf import commands
from app.scheduler.lsf.adapter import LsfAdapter
from app.scheduler.slurm.ssh import CommandResult
from app.scheduler.states import JobState
from app.scheduler.types import JobSpec
from tests.unit.scheduler.lsf.listing import with_wide_listing

SCRIPT = "#!/bin/bash\ntrue\n"
FIXTURES = Path(__file__).resolve().parents[3] / "fixtures" / "lsf"
CONFIG = ClusterConfig(
    name="lsfcluster",
    transport="ssh",
    login_host="lsfhead",
    login_port=22,
    service_user="hpcsvc",
    service_key="/dev/null",
    user_ca_key="/dev/null",
    scheduler="lsf",
)


class Scripted:
    """Answers each command by its program name; records what was run and as whom."""

    def __init__(self, answers: dict[str, CommandResult]) -> None:
        self.answers = answers
        self.calls: list[tuple[list[str], str | None]] = []

    async def run(self, argv: list[str], *, as_user: str | None = None, **_: Any) -> CommandResult:
        self.calls.append((argv, as_user))
        words = " ".join(argv).split()
        program = next(word for word in words if word in self.answers)
        return self.answers[program]

    async def stream(
        self, argv: list[str], consume: Callable[[bytes], None], **options: Any
    ) -> CommandResult:
        """As the transport streams: the output in pieces, none of it kept."""
        result = await self.run(argv, **options)
        for start in range(0, len(result.stdout), 1000):
            consume(result.stdout[start : start + 1000])
        return CommandResult(result.exit_status, b"", result.stderr)

    async def close(self) -> None:
        return None


def answer(stdout: str = "", stderr: str = "", status: int = 0) -> CommandResult:
    return CommandResult(status, stdout.encode(), stderr)


def adapter_with(answers: dict[str, CommandResult]) -> tuple[LsfAdapter, Scripted]:
    ssh = Scripted(answers)
    return LsfAdapter(dataclasses.replace(CONFIG), ssh), ssh  # type: ignore[arg-type]


async def test_the_queue_is_one_bjobs_call_as_the_service_identity() -> None:
    text = with_wide_listing((FIXTURES / "bjobs-l-a-u-all.txt").read_text())
    adapter, ssh = adapter_with({"bjobs": answer(text)})
    jobs = await adapter.queue()
    assert len(jobs) == 23 and {j.state for j in jobs} >= {JobState.RUNNING, JobState.TIMEOUT}
    assert ssh.calls == [(commands.bjobs_argv(), None)]


async def test_no_jobs_is_an_empty_queue_and_a_silent_daemon_is_unavailable() -> None:
    adapter, _ = adapter_with({"bjobs": answer(stderr="No unfinished job found\n", status=255)})
    assert await adapter.queue() == []
    adapter, _ = adapter_with({"bjobs": answer(stderr="LSF is down\n", status=255)})
    with pytest.raises(SchedulerUnavailable):
        await adapter.queue()


async def test_a_submission_returns_bsubs_id_and_runs_as_the_user() -> None:
    adapter, ssh = adapter_with({"bsub": answer("Job <42> is submitted to queue <short>.\n")})
    assert await adapter.submit(JobSpec(script=SCRIPT, partition="short"), "alice") == "42"
    assert ssh.calls[0][1] == "alice"


async def test_refusals_and_daemons_that_do_not_answer_are_told_apart() -> None:
    adapter, _ = adapter_with(
        {"bsub": answer(stderr="gpu: No such queue. Job not submitted.\n", status=255)}
    )
    with pytest.raises(SubmitRejected) as info:
        await adapter.submit(JobSpec(script=SCRIPT, partition="gpu"), "alice")
    assert info.value.kind is RejectKind.INVALID_PARTITION
    adapter, _ = adapter_with(
        {"bsub": answer(stderr="batch system daemon not responding ... still trying\n", status=255)}
    )
    with pytest.raises(SchedulerUnavailable):
        await adapter.submit(JobSpec(script=SCRIPT), "alice")


async def test_preflight_refuses_what_lsf_cannot_take_without_a_round_trip() -> None:
    adapter, ssh = adapter_with({})
    with pytest.raises(PreflightFailed) as info:
        await adapter.preflight(JobSpec(script=SCRIPT, qos="high"), "alice")
    assert info.value.problems == [("qos", "this LSF cluster has no QOS")]
    assert ssh.calls == []


async def test_a_kill_of_an_unknown_job_is_job_not_found() -> None:
    adapter, _ = adapter_with(
        {"bkill": answer(stderr="Job <987654>: No matching job found\n", status=255)}
    )
    with pytest.raises(JobNotFound):
        await adapter.cancel(["987654"], "alice")
