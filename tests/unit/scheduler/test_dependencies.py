"""Dependencies as sbatch receives them, and how they stand as the named jobs end."""

from dataclasses import replace

import pytest

from app.scheduler.dependencies import (
    Dependency,
    DependencyKind,
    Verdict,
    dependency_option,
    parse_dependency,
    verdict,
)
from app.scheduler.errors import SubmitRejected
from app.scheduler.fake import FakeScheduler
from app.scheduler.slurm.commands import sbatch_argv
from app.scheduler.states import JobState
from app.scheduler.types import JobSpec

OK, ANY, NOT_OK = DependencyKind.AFTER_OK, DependencyKind.AFTER_ANY, DependencyKind.AFTER_NOT_OK
SPEC = JobSpec(script="#!/bin/bash\ntrue\n", name="t", account="physics")


def test_clauses_become_one_argv_word_for_sbatch() -> None:
    value = dependency_option(
        [Dependency(OK, ("123", "124")), Dependency(DependencyKind.SINGLETON)]
    )
    assert value == "afterok:123:124,singleton"
    argv = sbatch_argv(JobSpec(script="x", dependency=value))
    assert "--dependency=afterok:123:124,singleton" in argv
    assert parse_dependency(value) == (
        Dependency(OK, ("123", "124")),
        Dependency(DependencyKind.SINGLETON),
    )


def test_no_clause_is_no_option() -> None:
    assert dependency_option([]) is None
    assert parse_dependency(None) == ()


@pytest.mark.parametrize(
    "bad",
    [
        lambda: Dependency(OK),
        lambda: Dependency(OK, ("12;rm",)),
        lambda: Dependency(DependencyKind.SINGLETON, ("1",)),
    ],
)
def test_malformed_clauses_are_refused(bad: object) -> None:
    with pytest.raises(ValueError):
        bad()  # type: ignore[operator]


@pytest.mark.parametrize(
    ("kind", "state", "expected"),
    [
        (OK, JobState.RUNNING, Verdict.WAITING),
        (OK, JobState.COMPLETED, Verdict.SATISFIED),
        (OK, JobState.FAILED, Verdict.NEVER),
        (OK, JobState.CANCELLED, Verdict.NEVER),
        (ANY, JobState.FAILED, Verdict.SATISFIED),
        (NOT_OK, JobState.FAILED, Verdict.SATISFIED),
        (NOT_OK, JobState.COMPLETED, Verdict.NEVER),
        (OK, None, Verdict.WAITING),
    ],
)
def test_verdict_follows_slurms_rule(
    kind: DependencyKind, state: JobState | None, expected: Verdict
) -> None:
    assert verdict([Dependency(kind, ("1",))], {"1": state}) is expected


def test_one_clause_that_never_holds_decides_for_all() -> None:
    clauses = [Dependency(ANY, ("1",)), Dependency(OK, ("2",))]
    assert verdict(clauses, {"1": JobState.RUNNING, "2": JobState.FAILED}) is Verdict.NEVER


async def test_fake_waits_then_releases_or_never_satisfies() -> None:
    fake = FakeScheduler(accounts={"alice": ["physics"]})
    first = await fake.submit(SPEC, "alice")
    after_ok = await fake.submit(replace(SPEC, dependency=f"afterok:{first}"), "alice")
    after_not_ok = await fake.submit(replace(SPEC, dependency=f"afternotok:{first}"), "alice")
    assert fake.jobs[after_ok].reason == "Dependency"
    fake.start(first)
    fake.finish(first, exit_code=1)
    assert fake.jobs[after_ok].reason == "DependencyNeverSatisfied"
    assert fake.jobs[after_not_ok].reason == "None"


async def test_fake_refuses_a_dependency_on_an_unknown_job() -> None:
    fake = FakeScheduler(accounts={"alice": ["physics"]})
    with pytest.raises(SubmitRejected, match="dependency"):
        await fake.submit(replace(SPEC, dependency="afterok:99"), "alice")
