import shlex
from dataclasses import replace
from datetime import UTC, datetime, timedelta, timezone

import pytest

from app.scheduler.errors import InvalidSpec
from app.scheduler.slurm import commands
from app.scheduler.types import Gres, JobSpec

SPEC = JobSpec(
    script="#!/bin/bash\n#SBATCH --account=evil\necho hi\n",
    name="sweep",
    account="physics",
    partition="debug",
    time_limit=90,
    cpus_per_task=2,
    ntasks=1,
    memory_mb=512,
    gres=(Gres("gpu", 2, "a100"),),
    array="1-10%2",
    stdout="/home/alice/out-%A_%a.txt",
    comment="uuid-1",
    hold=True,
)


def test_sbatch_puts_every_option_on_argv_and_nothing_in_the_script() -> None:
    argv = commands.sbatch_argv(SPEC)
    assert argv[:2] == ["sbatch", "--parsable"]
    assert "--account=physics" in argv
    assert "--time=0-01:30:00" in argv
    assert "--gres=gpu:a100:2" in argv
    assert "--array=1-10%2" in argv
    assert "--mem=512M" in argv
    assert "--hold" in argv
    assert "--export=NONE" in argv
    assert not any(SPEC.script in arg for arg in argv)


def test_environment_goes_through_env_not_export() -> None:
    spec = replace(SPEC, environment={"A": "x,y=z", "B": "$(id)"})
    argv = commands.sbatch_argv(spec)
    assert argv[:3] == ["env", "A=x,y=z", "B=$(id)"]
    assert "--export=ALL" in argv
    # Round-trips through the remote shell unchanged.
    assert shlex.split(shlex.join(argv)) == argv


def test_test_only_flag_is_added_for_preflight() -> None:
    assert "--test-only" in commands.sbatch_argv(SPEC, test_only=True)


def test_squeue_takes_its_format_on_stdin_never_in_argv() -> None:
    argv = commands.squeue_argv()
    assert not any("Format" in arg or "mark" in arg for arg in argv)
    assert "--json" not in argv
    # The shell snippet is fixed text; what follows it is squeue's own argv.
    assert argv[:3] == [
        "sh",
        "-c",
        'IFS= read -r SQUEUE_FORMAT2 && export SQUEUE_FORMAT2 && exec "$@"',
    ]
    assert argv[4:7] == ["env", "TZ=UTC", "squeue"]


def test_squeue_marks_the_separators_around_free_text_and_each_end() -> None:
    fmt = commands.squeue_format(f"{commands.SEP}MARK", "\x1eEND")
    specs = fmt.split(",")
    assert len(specs) == len(commands.SQUEUE_FIELDS)
    suffixes = {
        key: spec.split(":0", 1)[1]
        for (key, _), spec in zip(commands.SQUEUE_FIELDS, specs, strict=True)
    }
    assert suffixes["exit_status"] == suffixes["name"] == f"{commands.SEP}MARK"
    assert suffixes["nodes"] == suffixes["work_dir"] == suffixes["stderr"] == f"{commands.SEP}MARK"
    assert suffixes["comment"] == "\x1eEND"
    assert suffixes["job_id"] == suffixes["user"] == commands.SEP


def test_sacct_selects_jobs_and_includes_steps() -> None:
    argv = commands.sacct_argv(["12", "13_2"])
    assert "--jobs=12,13_2" in argv
    assert "--allocations" not in argv
    assert f"--delimiter={commands.SEP}" in argv and "--parsable" in argv
    assert f"--delimiter={commands.SEP}mark" in commands.sacct_argv(delimiter=f"{commands.SEP}mark")


def test_sacct_since_is_converted_to_utc() -> None:
    local = datetime(2026, 1, 2, 3, 4, 5, tzinfo=timezone(timedelta(hours=2)))
    argv = commands.sacct_argv(since=local)
    assert "--starttime=2026-01-02T01:04:05" in argv
    assert "--endtime=now" in argv
    assert datetime(2026, 1, 2, 1, 4, 5, tzinfo=UTC) == local


@pytest.mark.parametrize("bad", ["12;rm", "-1", "12 13", "abc", "12_", "$(id)"])
def test_job_ids_are_checked_before_reaching_any_command(bad: str) -> None:
    for builder in (commands.scancel_argv, commands.hold_argv, commands.release_argv):
        with pytest.raises(InvalidSpec):
            builder([bad])


def test_read_chunk_passes_path_as_data_not_code() -> None:
    path = "/home/alice/o'; rm -rf ~; '.txt"
    argv = commands.read_chunk_argv(path, 10, 100)
    assert argv[:2] == ["sh", "-c"]
    assert argv[4:] == [path, "10", "100"]
    assert path not in argv[2]


def test_associations_rejects_odd_user_names() -> None:
    with pytest.raises(InvalidSpec):
        commands.associations_argv("alice where account=x")


def test_format_minutes() -> None:
    assert commands.format_minutes(10_080) == "7-00:00:00"
    assert commands.format_minutes(61) == "0-01:01:00"


def test_script_arguments_follow_the_script_file_as_separate_words() -> None:
    spec = JobSpec(script="#!/bin/bash\n", name="x", args=("a b", "$(id)", "-p"))
    argv = commands.sbatch_argv(spec, test_only=True)
    assert argv[:2] == ["bash", "-c"]
    options = argv[5 : 5 + int(argv[4])]
    assert options[:2] == ["--parsable", "--test-only"] and "--job-name=x" in options
    assert argv[5 + int(argv[4]) :] == ["a b", "$(id)", "-p"]


def test_without_arguments_the_script_goes_to_sbatch_on_stdin() -> None:
    assert commands.sbatch_argv(JobSpec(script="#!/bin/bash\n", name="x"))[0] == "sbatch"
