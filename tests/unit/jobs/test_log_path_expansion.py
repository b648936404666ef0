import pytest

from app.jobs.logs import expand_log_path
from app.models.jobs import Job
from app.scheduler.errors import InvalidSpec
from app.scheduler.log_paths import PatternValues, check_expanded_paths, expand
from app.scheduler.types import JobSpec

ROOTS = ("/home", "/scratch")


def spec(name: str, stdout: str | None = None, stderr: str | None = None) -> JobSpec:
    return JobSpec(script="#!/bin/bash\n", name=name, stdout=stdout, stderr=stderr)


@pytest.mark.parametrize(
    ("name", "path"),
    [
        ("..", "/home/alice/%x/%x/tmp/out-%j"),
        ("..", "/home/alice/portal-jobs/%x/%x/%x/etc/cron.d/x"),
        ("..", "/scratch/%x/home/bob/out"),
    ],
)
def test_a_job_name_that_walks_out_of_the_roots_is_refused(name: str, path: str) -> None:
    for field in ("stdout", "stderr"):
        with pytest.raises(InvalidSpec) as error:
            check_expanded_paths(spec(name, **{field: path}), "alice", ROOTS)
        assert error.value.field == field
        assert "%x" in error.value.message


def test_ordinary_patterns_pass() -> None:
    check_expanded_paths(spec("train run", "/home/alice/%x/%u-%j_%A_%a.out"), "alice", ROOTS)
    check_expanded_paths(spec("..", "/home/alice/slurm-%j.out"), "alice", ROOTS)


def test_expansion_matches_slurm() -> None:
    values = PatternValues("12_3", "run", "alice", "12", "3")
    assert expand("/h/%u/%x-%A_%a-%%j-%q", values) == "/h/alice/run-12_3-%j-%q"


def test_an_array_tasks_j_is_its_own_slurm_number() -> None:
    task = Job(name="sweep", slurm_job_id="40_7", slurm_raw_id="47", array_task_id=7)
    path = expand_log_path("/home/alice/%x-%A_%a-%j.out", task, "alice")
    assert path == "/home/alice/sweep-40_7-47.out"
    plain = Job(name="one", slurm_job_id="52", slurm_raw_id="52")
    assert expand_log_path("/home/alice/%x-%j-%A-%a.out", plain, "alice") == (
        "/home/alice/one-52-52-4294967294.out"
    )
