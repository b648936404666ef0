from dataclasses import replace
from datetime import timedelta

import pytest

from app.scheduler.errors import InvalidSpec
from app.scheduler.types import Gres, JobSpec
from app.scheduler.validation import resolve_log_path, validate_spec

ROOTS = ("/home", "/scratch")
GOOD = JobSpec(
    script="#!/bin/bash\necho hi\n",
    name="train model",
    account="physics",
    partition="debug",
    time_limit=timedelta(minutes=30),
    cpus_per_task=4,
    memory_mb=2048,
    gres=(Gres("gpu", 1, "a100"),),
    array="1-10%2",
    working_dir="/home/alice/run",
    stdout="/home/alice/run/out-%A_%a.txt",
    environment={"OMP_NUM_THREADS": "4", "NOTE": "a;b $(x) `y`"},
    dependency="afterok:12:13_2,afterany:14",
    comment="0b6a2f0e-6a1e-4d0b-9a3e-1c1f1d1e1f10",
)


def test_a_typical_spec_is_valid() -> None:
    validate_spec(GOOD, ROOTS)


HOSTILE = [
    ("name", "x$(reboot)"),
    ("name", "x`id`"),
    ("name", "ok\n#SBATCH --account=x"),
    ("name", "nul\x00byte"),
    ("name", "n" * 200),
    ("account", "physics\n#SBATCH --account=x"),
    ("account", "phys ics"),
    ("account", "--partition=long"),
    ("partition", "debug,long;rm"),
    ("qos", "normal\r"),
    ("array", "1-10%2;true"),
    ("array", "1-"),
    ("dependency", "afterok:$(id)"),
    ("dependency", "after:"),
    ("comment", "uuid\n#SBATCH --qos=high"),
    ("comment", "c" * 600),
    ("working_dir", "relative/dir"),
    ("working_dir", "/home/alice/../bob"),
    ("stdout", "/etc/passwd"),
    ("stdout", "/home/alice/out$(id).txt"),
    ("stdout", "/home/alice/out-%q.txt"),
    ("stderr", "/home/alice/\x00.err"),
    ("begin", "tomorrow; rm -rf /"),
]


@pytest.mark.parametrize(("field", "value"), HOSTILE)
def test_hostile_values_are_refused_naming_the_field(field: str, value: str) -> None:
    with pytest.raises(InvalidSpec) as info:
        validate_spec(replace(GOOD, **{field: value}), ROOTS)
    assert info.value.field == field


@pytest.mark.parametrize(
    "env",
    [{"1BAD": "x"}, {"BAD-KEY": "x"}, {"A B": "x"}, {"GOOD": "nul\x00"}, {"": "x"}],
)
def test_environment_names_and_values_are_checked(env: dict[str, str]) -> None:
    with pytest.raises(InvalidSpec) as info:
        validate_spec(replace(GOOD, environment=env), ROOTS)
    assert info.value.field == "environment"


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"script": "echo no shebang\n"}, "script"),
        ({"script": "#!/bin/bash\n\x00"}, "script"),
        ({"script": "#!/bin/bash\n" + "x" * (1024 * 1024)}, "script"),
        ({"cpus_per_task": 0}, "cpus_per_task"),
        ({"ntasks": -1}, "ntasks"),
        ({"time_limit": 0}, "time_limit"),
        ({"mem_per_cpu_mb": 100}, "memory_mb"),
        ({"gres": (Gres("gpu;x", 1),)}, "gres"),
        ({"gres": (Gres("gpu", 0),)}, "gres"),
    ],
)
def test_malformed_resources_are_refused(changes: dict[str, object], field: str) -> None:
    with pytest.raises(InvalidSpec) as info:
        validate_spec(replace(GOOD, **changes), ROOTS)
    assert info.value.field == field


def test_time_limit_timedelta_rounds_up_to_whole_minutes() -> None:
    assert replace(GOOD, time_limit=timedelta(seconds=10)).time_limit_minutes == 1
    assert replace(GOOD, time_limit=timedelta(seconds=61)).time_limit_minutes == 2


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("/home/alice/out.txt", "/home/alice/out.txt"),
        ("/home/alice//logs/./out.txt", "/home/alice/logs/out.txt"),
        ("/scratch", "/scratch"),
    ],
)
def test_log_paths_are_normalised(path: str, expected: str) -> None:
    assert resolve_log_path(path, ROOTS) == expected


@pytest.mark.parametrize(
    "path",
    [
        "/home/alice/../../etc/shadow",
        "/home/../etc/passwd",
        "home/alice/out.txt",
        "/homeless/alice",
        "/etc/passwd",
        "/home/alice/out\n.txt",
        "/home/alice/\x00",
        "/home/" + "a" * 5000,
    ],
)
def test_log_paths_escaping_the_roots_are_refused(path: str) -> None:
    with pytest.raises(InvalidSpec):
        resolve_log_path(path, ROOTS)


@pytest.mark.parametrize(
    ("array", "message"),
    [
        ("5-1", "5-1 counts down; write the smaller number first (1-5)"),
        ("1-4%0", "%0 would let no task run; write %1 or more, or leave it out for no limit"),
        ("1-10:0", "1-10:0 has a step of 0; use :1 or more"),
        ("1,7-3", "7-3 counts down; write the smaller number first (3-7)"),
        ("1-4%", "use task numbers like 1-10, 1,3,5 or 1-100%4"),
    ],
)
def test_array_specs_sbatch_refuses_or_that_run_nothing_are_refused_in_words(
    array: str, message: str
) -> None:
    with pytest.raises(InvalidSpec) as info:
        validate_spec(replace(GOOD, array=array), ROOTS)
    assert (info.value.field, info.value.message) == ("array", message)


@pytest.mark.parametrize("array", ["3", "3-3", "0-19", "1-20:2%3", "1,3,5-9%1"])
def test_array_specs_as_tutorials_write_them_pass(array: str) -> None:
    validate_spec(replace(GOOD, array=array), ROOTS)


def test_more_nodes_than_tasks_is_refused_rather_than_quietly_lowered() -> None:
    with pytest.raises(InvalidSpec) as info:
        validate_spec(replace(GOOD, nodes=2, ntasks=1), ROOTS)
    assert info.value.field == "nodes"
    assert info.value.message.startswith("2 nodes for 1 task leaves a node with nothing to run")
    validate_spec(replace(GOOD, nodes=2, ntasks=2), ROOTS)
