"""qsub, qdel, qhold, qrls and qstat argv from a JobSpec: pure, no cluster."""

import subprocess
from datetime import timedelta

import pytest

from app.scheduler.errors import InvalidSpec
from app.scheduler.pbs import commands
from app.scheduler.types import Gres, JobSpec


def test_a_plain_job_is_qsub_in_the_foreground_with_the_script_on_stdin() -> None:
    argv = commands.qsub_argv(JobSpec(script="x", name="hello"), "alice")
    # -f: no per-user qsub daemon is left behind on the login node.
    assert argv == ["qsub", "-f", "-N", "hello", "-j", "oe"]


def test_resources_become_one_select_chunk_per_node_and_a_walltime() -> None:
    job = JobSpec(
        script="x",
        name="big",
        partition="workq",
        account="physics",
        time_limit=timedelta(hours=25, minutes=30),
        nodes=2,
        ntasks=4,
        cpus_per_task=2,
        memory_mb=2048,
        gres=(Gres("gpu", 2, "a100"),),
    )
    assert commands.qsub_options(job, "alice") == [
        "-N", "big", "-A", "physics", "-q", "workq",
        "-l", "walltime=25:30:00",
        "-l", "select=2:ncpus=4:mem=2048mb:ngpus=1",
        "-j", "oe",
    ]  # fmt: skip


def test_memory_per_cpu_is_memory_per_chunk() -> None:
    job = JobSpec(script="x", cpus_per_task=4, mem_per_cpu_mb=500)
    assert commands.select_statement(job) == "select=1:ncpus=4:mem=2000mb"


def test_an_array_a_hold_a_dependency_a_start_time_and_the_uuid() -> None:
    job = JobSpec(
        script="x",
        name="a",
        array="1-10%2",
        hold=True,
        dependency="afterok:12.pbshead",
        begin="2026-12-01T08:30",
        comment="0f1e",
        environment={"MODE": "fast,safe"},
        stdout="/home/alice/out/%x.^array_index^",
        stderr="/home/alice/out/err-%a.txt",
    )
    argv = commands.qsub_argv(job, "alice")
    # Values travel in qsub's environment, never through -v's comma-separated syntax.
    assert argv[:3] == ["env", "MODE=fast,safe", "PORTAL_COMMENT=0f1e"]
    assert argv[3:6] == ["qsub", "-f", "-h"]
    options = argv[6:]
    for pair in (
        ["-J", "1-10%2"],
        ["-W", "depend=afterok:12.pbshead"],
        ["-a", "202612010830.00"],
        ["-v", "MODE,PORTAL_COMMENT"],
        ["-o", "/home/alice/out/a.^array_index^"],
        ["-e", "/home/alice/out/err-^array_index^.txt"],
    ):
        index = options.index(pair[0])
        assert options[index : index + 2] == pair
    assert "-j" not in options


def test_a_log_path_naming_the_job_id_is_set_once_qsub_has_answered() -> None:
    job = JobSpec(script="x", name="r", stdout="/home/alice/%x-%j.out")
    argv = commands.qsub_argv(job, "alice")
    assert argv[:2] == ["sh", "-c"]
    assert argv[3:7] == ["qsub", "0", "/home/alice/r-%j.out", ""]


def test_the_job_id_snippet_fills_in_the_number_for_plain_and_array_jobs(tmp_path) -> None:
    # The snippet run by sh against stand-ins for qsub, qalter and qrls that echo their argv.
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    log = tmp_path / "calls"
    for name, answer in (("qsub", "$QSUB_ANSWER"), ("qalter", ""), ("qrls", ""), ("qdel", "")):
        script = bin_dir / name
        script.write_text(f'#!/bin/sh\necho "{name} $*" >> {log}\necho "{answer}"\n')
        script.chmod(0o755)
    job = JobSpec(script="x", name="r", stdout="/o/%x-%j.out", stderr="/o/%A_%a.err", array="1-2")
    argv = commands.qsub_argv(job, "alice")
    env = {"PATH": f"{bin_dir}:/usr/bin:/bin", "QSUB_ANSWER": "41[].pbshead"}
    done = subprocess.run(argv, env=env, capture_output=True, text=True, check=True)
    assert done.stdout == "41[].pbshead\n"
    calls = log.read_text().splitlines()
    assert calls[0].startswith("qsub -f -h -N r ")
    assert calls[1] == "qalter -o /o/r-41.out -e /o/41_^array_index^.err 41[].pbshead"
    assert calls[2] == "qrls -h u 41[].pbshead"


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"qos": "high"}, "qos"),
        ({"args": ("a",)}, "args"),
        ({"array": "1,3,5"}, "array"),
        ({"array": "3-3"}, "array"),
        ({"dependency": "singleton"}, "dependency"),
        ({"begin": "now+60"}, "begin"),
    ],
)
def test_what_pbs_cannot_express_is_refused_by_field(changes: dict, field: str) -> None:
    with pytest.raises(InvalidSpec) as info:
        commands.qsub_options(JobSpec(script="x", **changes), "alice")
    assert info.value.field == field


@pytest.mark.parametrize("job_id", ["12", "12.pbshead", "12[].pbshead", "12[4].pbshead", "12[4]"])
def test_job_actions_take_pbs_ids(job_id: str) -> None:
    assert commands.qdel_argv([job_id]) == ["qdel", job_id]
    assert commands.qhold_argv([job_id]) == ["qhold", "-h", "u", job_id]
    assert commands.qrls_argv([job_id]) == ["qrls", "-h", "u", job_id]


@pytest.mark.parametrize("job_id", ["12_4", "-x", "12.pbshead; rm", "12[a]"])
def test_anything_else_is_not_a_job_id(job_id: str) -> None:
    with pytest.raises(InvalidSpec):
        commands.qdel_argv([job_id])


def test_the_listing_is_one_qstat_of_every_job_and_task_with_the_history() -> None:
    assert commands.qstat_argv(history=True) == [
        "env", "TZ=UTC", "qstat", "-f", "-F", "json", "-t", "-x",
    ]  # fmt: skip
    assert commands.qstat_argv(["5.pbshead"])[-1] == "5.pbshead"


def test_qsub_runs_in_the_working_folder_so_that_pbs_o_workdir_names_it() -> None:
    job = JobSpec(script="x", name="w", working_dir="/home/alice/w")
    argv = commands.submit_argv(job, "alice", [])
    assert argv[:2] == ["sh", "-c"] and argv[3:5] == ["cd", "/home/alice/w"]
    assert argv[5:7] == ["qsub", "-f"]
