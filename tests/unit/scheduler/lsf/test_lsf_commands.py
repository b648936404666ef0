"""LSF argv builders: every option of a JobSpec in bsub's terms, nothing through a shell."""

from __future__ import annotations

from datetime import timedelta

import pytest

from app.scheduler.errors import InvalidSpec
from app.scheduler.lsf import commands
from app.scheduler.slurm.commands import FOLDERS_REFUSED
from app.scheduler.types import Gres, JobSpec


def test_a_full_spec_becomes_bsub_options_run_in_the_working_directory() -> None:
    spec = JobSpec(
        script="#!/bin/bash\ntrue\n",
        name="train",
        account="physics",
        partition="short",
        time_limit=timedelta(hours=1, seconds=1),
        ntasks=2,
        cpus_per_task=2,
        nodes=1,
        memory_mb=2048,
        working_dir="/home/alice/run",
        stdout="/home/alice/run/%x-%j.out",
        stderr="/home/alice/run/%u-%j.err",
        environment={"OMP_NUM_THREADS": "2"},
        dependency="afterok:12:13",
        comment="3f2a9c1e-0b7d-4c55-9d1e-2a6f0e4b8c11",
        hold=True,
    )
    assert commands.bsub_argv(spec, "alice") == [
        "env", "-C", "/home/alice/run", "OMP_NUM_THREADS=2",
        "bsub",
        "-J", "train#portal:3f2a9c1e-0b7d-4c55-9d1e-2a6f0e4b8c11",
        "-q", "short",
        "-P", "physics",
        "-W", "61",
        "-n", "4",
        "-R", "span[hosts=1]",
        "-M", str(2048 * 1024),
        "-N", "-o", "/home/alice/run/train-%J.out",
        "-e", "/home/alice/run/alice-%J.err",
        "-w", "done(12) && done(13)",
        "-H",
    ]  # fmt: skip


def test_a_plain_spec_still_names_its_output_file() -> None:
    # Without -o, LSF mails the output instead of writing it.
    assert commands.bsub_argv(JobSpec(script="true"), "alice") == [
        "env", "bsub", "-J", "job", "-N", "-o", "lsf-%J.out",
    ]  # fmt: skip


def test_an_array_is_in_the_job_name_with_its_throttle() -> None:
    spec = JobSpec(script="true", name="sweep", array="1-10%2", stdout="/home/a/%A_%a.out")
    argv = commands.bsub_argv(spec, "alice")
    assert argv[argv.index("-J") + 1] == "sweep[1-10]%2"
    assert argv[argv.index("-o") + 1] == "/home/a/%J_%I.out"
    default = commands.bsub_argv(JobSpec(script="true", array="1,3,5"), "alice")
    assert default[default.index("-o") + 1] == "lsf-%J_%I.out"


def test_memory_per_cpu_is_the_jobs_total() -> None:
    argv = commands.bsub_argv(JobSpec(script="true", ntasks=2, mem_per_cpu_mb=100), "alice")
    assert argv[argv.index("-M") + 1] == str(200 * 1024)


def test_begin_is_month_day_hour_minute() -> None:
    argv = commands.bsub_argv(JobSpec(script="true", begin="2026-12-01T08:30"), "alice")
    assert argv[argv.index("-b") + 1] == "12:01:08:30"


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"args": ("x",)}, "args"),
        ({"qos": "high"}, "qos"),
        ({"gres": (Gres("gpu", 1),)}, "gres"),
        ({"name": "two words"}, "name"),
        ({"comment": "not; a uuid"}, "comment"),
        ({"array": "1-3; rm"}, "array"),
        ({"stdout": "/home/a/%N.out"}, "stdout"),
        ({"dependency": "singleton"}, "dependency"),
        ({"begin": "tomorrow"}, "begin"),
        ({"environment": {"A B": "1"}}, "environment"),
    ],
)
def test_what_lsf_cannot_take_is_refused_before_anything_is_sent(changes, field) -> None:
    with pytest.raises(InvalidSpec) as info:
        commands.bsub_argv(JobSpec(script="true", **changes), "alice")
    assert info.value.field == field


def test_submission_makes_the_folders_first_in_the_same_round_trip() -> None:
    argv = commands.submit_argv(JobSpec(script="true"), "alice", ["/home/alice/logs"])
    assert argv[:2] == ["sh", "-c"] and f"exit {FOLDERS_REFUSED}" in argv[2]
    assert argv[4:] == [
        "1",
        "/home/alice/logs",
        "env",
        "bsub",
        "-J",
        "job",
        "-N",
        "-o",
        "lsf-%J.out",
    ]


def test_listings_cover_every_users_recent_jobs_in_utc() -> None:
    assert commands.bjobs_argv() == [
        "env", "TZ=UTC", "sh", "-c",
        'bjobs -w -a -u all; printf "\\036\\n"; exec bjobs -l -a -u all',
    ]  # fmt: skip
    assert commands.bhist_argv(["12", "13[2]"]) == [
        "env", "TZ=UTC", "sh", "-c",
        'bhist -w -a -u all "$@"; printf "\\036\\n"; exec bhist -l -a -u all "$@"',
        "bhist", "12", "13[2]",
    ]  # fmt: skip
    with pytest.raises(InvalidSpec):
        commands.bhist_argv(["12; rm -rf ~"])


def test_job_actions_take_only_lsf_job_ids() -> None:
    assert commands.bkill_argv(["12", "13[4]"]) == ["bkill", "12", "13[4]"]
    assert commands.bstop_argv(["12"]) == ["bstop", "12"]
    assert commands.bresume_argv(["12"]) == ["bresume", "12"]
    with pytest.raises(InvalidSpec):
        commands.bkill_argv(["12; rm -rf ~"])
    with pytest.raises(InvalidSpec):
        commands.bkill_argv(["12_3"])
