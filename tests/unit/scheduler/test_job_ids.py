"""Array task ids of each scheduler read back into the array id its records carry."""

from __future__ import annotations

import pytest

from app.scheduler.job_ids import array_task_of


@pytest.mark.parametrize(
    ("job_id", "expected"),
    [
        ("12_3", ("12", 3)),  # Slurm
        ("12[3].pbs-head", ("12[].pbs-head", 3)),  # PBS: the array keeps its server
        ("12[3]", ("12", 3)),  # LSF
        ("40[11].pbs.example.org", ("40[].pbs.example.org", 11)),
    ],
)
def test_a_task_id_gives_its_array_and_index(job_id: str, expected: tuple[str, int]) -> None:
    assert array_task_of(job_id) == expected


@pytest.mark.parametrize(
    "job_id", ["12", "12_[2-5]", "12[].pbs-head", "12[2-5]", "12.pbs-head", "", "x_1", "12_1_2"]
)
def test_other_ids_are_not_tasks(job_id: str) -> None:
    assert array_task_of(job_id) is None
