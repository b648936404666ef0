"""PbsAdapter.queue on a transport that streams scripted answers: what the poller is told."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from app.scheduler.config import ClusterConfig
from app.scheduler.errors import SchedulerUnavailable
from app.scheduler.pbs.adapter import PbsAdapter
from app.scheduler.pbs.parsing import parse_jobs
from app.scheduler.slurm.ssh import CommandResult

HISTORY = Path(__file__).resolve().parents[3] / "fixtures" / "pbs" / "23.06" / "qstat-history.json"
CONFIG = ClusterConfig(
    name="pbscluster",
    transport="ssh",
    login_host="pbshead",
    login_port=22,
    service_user="hpcsvc",
    service_key="/dev/null",
    user_ca_key="/dev/null",
    scheduler="pbs",
)


class Streaming:
    """Streams one scripted answer in pieces of 100 bytes, as the transport does."""

    def __init__(self, stdout: bytes, stderr: str = "", status: int = 0) -> None:
        self.answer = (stdout, stderr, status)
        self.commands: list[list[str]] = []

    async def stream(
        self, argv: list[str], consume: Callable[[bytes], None], **_: Any
    ) -> CommandResult:
        self.commands.append(argv)
        stdout, stderr, status = self.answer
        for start in range(0, len(stdout), 100):
            consume(stdout[start : start + 100])
        return CommandResult(status, b"", stderr)


def adapter_answering(stdout: bytes, stderr: str = "", status: int = 0) -> PbsAdapter:
    return PbsAdapter(CONFIG, Streaming(stdout, stderr, status))  # type: ignore[arg-type]


async def test_the_queue_is_qstats_history_read_as_it_streams() -> None:
    text = HISTORY.read_text()
    adapter = adapter_answering(text.encode())
    assert await adapter.queue() == parse_jobs(text)
    assert "-x" in adapter.ssh.commands[0]  # type: ignore[attr-defined]


async def test_a_qstat_that_fails_says_so_in_its_own_words() -> None:
    adapter = adapter_answering(b"", "qstat: cannot connect to server pbshead (errno=111)", 2)
    with pytest.raises(SchedulerUnavailable, match="qstat failed: qstat: cannot connect"):
        await adapter.queue()


@pytest.mark.parametrize("answer", [b"qstat: garbled", HISTORY.read_bytes()[:5000]])
async def test_an_answer_that_is_not_qstats_json_fails_the_cycle_plainly(answer: bytes) -> None:
    with pytest.raises(SchedulerUnavailable, match="qstat's answer could not be read"):
        await adapter_answering(answer).queue()
