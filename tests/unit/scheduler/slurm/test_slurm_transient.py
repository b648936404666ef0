"""A controller that cannot answer is an outage to retry, never a refusal of the job."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import pytest

from app.scheduler.config import ClusterConfig
from app.scheduler.errors import SchedulerUnavailable, SubmitRejected, is_transient
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
SPEC = JobSpec(script="#!/bin/bash\ntrue\n", time_limit=10)

# sbatch's stderr as Slurm prints it when slurmctld is busy, restarting or unreachable.
TRANSIENT = [
    "sbatch: error: Batch job submission failed: Unable to contact slurm controller "
    "(connect failure)",
    "sbatch: error: Batch job submission failed: Socket timed out on send/recv operation",
    "sbatch: error: Slurm temporarily unable to accept job, sleeping and retrying\n"
    "sbatch: error: Batch job submission failed: Resource temporarily unavailable",
    "sbatch: error: slurm_receive_msg: Zero Bytes were transmitted or received",
]
REFUSALS = [
    "sbatch: error: Batch job submission failed: Invalid partition name specified",
    "sbatch: error: Batch job submission failed: Invalid account or account/partition "
    "combination specified",
    "sbatch: error: Batch job submission failed: Requested node configuration is not available",
]


class FailingSbatch:
    """sinfo answers from a recorded output; sbatch prints ``stderr`` and exits 1."""

    def __init__(self, stderr: str, sinfo: str) -> None:
        self.stderr = stderr
        self.sinfo = sinfo

    async def run(self, argv: Sequence[str], **options: Any) -> CommandResult:
        if "sbatch" in argv:
            return CommandResult(1, b"", self.stderr)
        return CommandResult(0, self.sinfo.encode() if "sinfo" in argv else b"", "")


@pytest.fixture
def adapter_answering(recorded: Recorded) -> Callable[[str], SlurmAdapter]:
    def build(stderr: str) -> SlurmAdapter:
        ssh = FailingSbatch(stderr, recorded.text("sinfo.txt"))
        return SlurmAdapter(CONFIG, ssh)  # type: ignore[arg-type]

    return build


@pytest.mark.parametrize("stderr", TRANSIENT)
def test_controller_outages_are_transient(stderr: str) -> None:
    assert is_transient(stderr)


@pytest.mark.parametrize("stderr", REFUSALS)
def test_refusals_are_not_transient(stderr: str) -> None:
    assert not is_transient(stderr)


@pytest.mark.parametrize("stderr", TRANSIENT)
async def test_preflight_reports_an_outage_not_a_problem_with_the_job(
    stderr: str, adapter_answering: Callable[[str], SlurmAdapter]
) -> None:
    with pytest.raises(SchedulerUnavailable, match="sbatch --test-only"):
        await adapter_answering(stderr).preflight(SPEC, "alice")


@pytest.mark.parametrize("stderr", TRANSIENT)
async def test_submit_leaves_an_unanswered_sbatch_to_reconciliation(
    stderr: str, adapter_answering: Callable[[str], SlurmAdapter]
) -> None:
    with pytest.raises(SchedulerUnavailable):
        await adapter_answering(stderr).submit(SPEC, "alice")


@pytest.mark.parametrize("stderr", REFUSALS)
async def test_submit_refusals_stay_refusals(
    stderr: str, adapter_answering: Callable[[str], SlurmAdapter]
) -> None:
    with pytest.raises(SubmitRejected):
        await adapter_answering(stderr).submit(SPEC, "alice")
