"""What a cluster's scheduler offers beyond the common interface, said explicitly, so pages and
the API can leave out what it lacks rather than show a blank.

The interface (base.py) is the same for every scheduler; where one has no way to answer (PBS
and LSF give no expected start time and have no REST service), its adapter says so here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

PartitionWord = Literal["partition", "queue"]


@dataclass(frozen=True, slots=True)
class Capabilities:
    """One scheduler's answers to "does it have...?"; Slurm's are the defaults."""

    scheduler: str = "slurm"
    partition_word: PartitionWord = "partition"
    """What the scheduler calls the lines jobs wait in: Slurm's partitions, PBS's queues."""
    rest_api: bool = True
    """A REST API the portal may use instead of SSH (slurmrestd)."""
    expected_start: bool = True
    """The scheduler estimates when a pending job will start."""
    accounts: bool = True
    """Users charge accounts they must belong to (Slurm's associations)."""
    batch_script: bool = True
    """A user may read back the script the scheduler keeps for a job."""
    reservations: bool = True
    account_limits: bool = True
    test_submission: bool = True
    """The scheduler can judge a job without queuing it (sbatch --test-only)."""
    script_arguments: bool = True
    """Arguments after the script reach it as $1, $2…"""
    qos: bool = True
    gpus: bool = True
    array_lists: bool = True
    """An array may list its indices (``1-3,7``); PBS takes one range with a step only."""
    memory_kill_reported: bool = True
    """A job killed for its memory is reported as such, not inferred."""


SLURM = Capabilities()


def capabilities_of(adapter: object) -> Capabilities:
    """The adapter's ``capabilities``, or Slurm's for an adapter that declares none."""
    found = getattr(adapter, "capabilities", None)
    return found if isinstance(found, Capabilities) else SLURM
