"""The one mapping between a request, the spec sent to Slurm and the stored job."""

from __future__ import annotations

import dataclasses

from app.jobs.job_fields import (
    CONVERTED,
    COPIED,
    NOT_RESUBMITTED,
    request_values,
    spec_values,
    stored_values,
)
from app.jobs.requests import JobRequest
from app.models.jobs import Job
from app.scheduler.types import Gres, JobSpec

FULL = JobRequest(
    project_id=3,
    script="#!/bin/bash\nsrun hostname\n",
    name="everything",
    partition="gpu",
    qos="long",
    time_limit_minutes=90,
    nodes=2,
    ntasks=4,
    cpus_per_task=8,
    memory_mb=16000,
    gpus=2,
    gpu_type="a100",
    array_spec="1-10%2",
    work_dir="/home/alice/run",
    stdout_path="/home/alice/run/out.txt",
    stderr_path="/home/alice/run/err.txt",
    environment={"OMP_NUM_THREADS": "8"},
    template_version_id=11,
    parameters={"steps": 5},
    args=("--fast", "input.dat"),
    retry_of_id=7,
    warnings=("line 3: ignored",),
)


def test_every_request_field_is_declared_once() -> None:
    declared = [*COPIED, *CONVERTED, *NOT_RESUBMITTED]
    assert sorted(declared) == sorted(field.name for field in dataclasses.fields(JobRequest))


def test_copied_fields_are_job_columns_and_spec_fields() -> None:
    columns = set(Job.__table__.columns.keys())
    spec_fields = {field.name for field in dataclasses.fields(JobSpec)}
    assert set(COPIED) <= columns
    assert {spec for spec in COPIED.values() if spec} <= spec_fields


def test_a_stored_request_asks_for_the_same_job_again() -> None:
    job = Job(project_id=FULL.project_id, **stored_values(FULL))

    again = JobRequest(**request_values(job))

    assert again == dataclasses.replace(FULL, retry_of_id=None, warnings=())


def test_the_spec_carries_the_request() -> None:
    spec = JobSpec(account="physics", comment="uuid", **spec_values(FULL))

    assert (spec.partition, spec.qos, spec.time_limit_minutes) == ("gpu", "long", 90)
    assert (spec.nodes, spec.ntasks, spec.cpus_per_task, spec.memory_mb) == (2, 4, 8, 16000)
    assert spec.gres == (Gres("gpu", 2, "a100"),)
    assert (spec.array, spec.working_dir) == ("1-10%2", "/home/alice/run")
    assert (spec.stdout, spec.stderr) == ("/home/alice/run/out.txt", "/home/alice/run/err.txt")
    assert spec.environment == {"OMP_NUM_THREADS": "8"}
    assert spec.args == ("--fast", "input.dat")
    assert (spec.script, spec.name) == (FULL.script, FULL.name)


def test_a_row_from_before_cpus_per_task_resubmits_its_cpus() -> None:
    job = Job(project_id=1, **{**stored_values(FULL), "cpus_per_task": None, "cpus": 6})

    assert request_values(job)["cpus_per_task"] == 6
