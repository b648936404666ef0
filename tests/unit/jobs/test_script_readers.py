"""Own scripts on PBS and LSF clusters: read with that scheduler's directives, sent as they are."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.errors import ValidationFailed
from app.jobs.scripts import ScriptJob, read_script
from app.jobs.submission import build_spec
from app.jobs.tasks import stepped_spec
from app.models.projects import Project
from app.scheduler.directives import Directive
from app.scheduler.lsf import commands as lsf
from app.scheduler.pbs import commands as pbs

HOME = "/home/alice"
GPU_JOBSCRIPT = (Path(__file__).parents[2] / "fixtures" / "lsf" / "gpu-jobscript.sh").read_text()
PBS_SCRIPT = """#!/bin/bash
#PBS -N train
#PBS -q gpu
#PBS -l select=2:ncpus=4:mem=2gb
#PBS -l walltime=01:30:00
#PBS -J 1-4
#PBS -o logs/train.out
#PBS -A chemistry
echo "${#arr[@]} {{ kept }}"
#PBS -q workq
"""


def read(script: str, scheduler: str, *overrides: Directive):
    job = ScriptJob(1, script, overrides=overrides, name="job.sh")
    return read_script(job, "physics", HOME, scheduler)


def test_the_seeds_lsf_jobscript_becomes_the_request_and_stays_byte_for_byte() -> None:
    request = read(GPU_JOBSCRIPT, "lsf").request
    assert request.script == GPU_JOBSCRIPT
    assert (request.name, request.partition) == ("gpu_train", "gpu")
    assert request.time_limit_minutes == 120
    assert (request.ntasks, request.work_dir) == (4, HOME)
    assert request.stdout_path == "/home/alice/gpu_%j.out"
    assert request.stderr_path == "/home/alice/gpu_%j.err"


def test_the_lsf_scripts_own_output_file_is_what_bsub_is_given() -> None:
    request = read(GPU_JOBSCRIPT, "lsf").request
    project = Project(id=1, name="p", slurm_account="physics", cluster="lsfcluster")
    argv = lsf.bsub_argv(build_spec(request, project, "abc"), "alice")
    assert argv[argv.index("-o") + 1] == "/home/alice/gpu_%J.out"
    assert argv[argv.index("-e") + 1] == "/home/alice/gpu_%J.err"
    assert argv[argv.index("-q") + 1] == "gpu" and argv[argv.index("-n") + 1] == "4"
    assert argv[argv.index("-W") + 1] == "120"
    assert argv[argv.index("-J") + 1] == "gpu_train#portal:abc"


def test_an_lsf_array_in_the_job_name_is_the_requests_array() -> None:
    request = read("#!/bin/bash\n#BSUB -J sweep[1-10]%2\n#BSUB -M 2048\necho\n", "lsf").request
    assert (request.name, request.array_spec, request.memory_mb) == ("sweep", "1-10%2", 2)


def test_a_pbs_script_becomes_the_request_with_what_qsub_would_ignore_as_a_warning() -> None:
    result = read(PBS_SCRIPT, "pbs")
    request = result.request
    assert request.script == PBS_SCRIPT
    assert (request.name, request.partition, request.time_limit_minutes) == ("train", "gpu", 90)
    assert (request.nodes, request.ntasks, request.cpus_per_task) == (2, 2, 4)
    assert (request.memory_mb, request.array_spec) == (2048, "1-4")
    assert request.stdout_path == "/home/alice/logs/train.out" and request.stderr_path is None
    assert result.warnings == (
        "line 10: qsub ignores #PBS lines after the first command; move it above that command "
        "(#PBS -q workq)",
        "the script asks for project chemistry; the job is charged to this project's account "
        "physics",
    )


def test_a_one_chunk_select_is_written_back_the_same_and_others_stay_the_scripts() -> None:
    project = Project(id=1, name="p", slurm_account="physics", cluster="pbscluster")
    request = read(PBS_SCRIPT, "pbs").request
    options = pbs.qsub_options(build_spec(request, project, "abc"), "alice")
    assert "select=2:ncpus=4:mem=2048mb" in options
    assert "walltime=01:30:00" in options and options[options.index("-q") + 1] == "gpu"
    two = read("#!/bin/bash\n#PBS -l select=1:ncpus=2+1:ncpus=1:ngpus=1\necho\n", "pbs").request
    assert (two.nodes, two.ntasks, two.cpus_per_task, two.memory_mb) == (None, None, None, None)
    assert pbs.select_statement(build_spec(two, project, "abc")) is None


@pytest.mark.parametrize(
    ("scheduler", "script", "said"),
    [
        (
            "pbs",
            "#!/bin/bash\n#PBS -l walltim=1:00:00\necho\n",
            "qsub would refuse this script: line 2: PBS has no resource walltim (did you mean "
            "walltime?) (PBS says: qsub: Unknown resource Resource_List.walltim)",
        ),
        (
            "lsf",
            "#!/bin/bash\n#BSUB -gpu num=1\necho\n",
            "bsub would refuse this script: line 2: this cluster's bsub (OpenLava 2.2) has no "
            "-gpu, an option of newer LSF (bsub: illegal option -- gpu)",
        ),
    ],
)
def test_a_misspelt_directive_is_refused_in_the_schedulers_terms(
    scheduler: str, script: str, said: str
) -> None:
    with pytest.raises(ValidationFailed) as info:
        read(script, scheduler)
    assert info.value.detail == said
    assert info.value.fields == {"script": said.partition(": ")[2]}


def test_the_scheduler_not_the_script_decides_which_lines_are_read() -> None:
    # #SBATCH lines on an LSF cluster are comments to bsub, as they are there.
    request = read("#!/bin/bash\n#SBATCH --partition=nowhere\n#SBATCH --bogus\necho\n", "lsf")
    assert request.request.partition is None
    with pytest.raises(ValidationFailed):
        read("#!/bin/bash\n#SBATCH --bogus\necho\n", "slurm")


def test_options_beside_the_script_are_refused_on_pbs_and_lsf() -> None:
    with pytest.raises(ValidationFailed) as info:
        read("#!/bin/bash\necho\n", "pbs", Directive("partition", "long"))
    assert info.value.fields == {
        "script": "on this cluster options are read from the script's #PBS lines; write them there"
    }


@pytest.mark.parametrize(
    ("indices", "spec"),
    [([2], "2-3:2"), ([3, 5, 7], "3-7:2"), ([4, 5, 6], "4-6"), ([9, 1], "1-9:8")],
)
def test_a_retry_on_pbs_is_one_stepped_range_qsub_takes(indices: list[int], spec: str) -> None:
    assert stepped_spec(indices) == spec
    assert pbs.array_range(spec) == spec
    assert stepped_spec(indices, "1") == f"{spec}%1"


def test_unevenly_spaced_failed_tasks_cannot_be_one_pbs_array() -> None:
    with pytest.raises(ValidationFailed) as info:
        stepped_spec([3, 7, 12])
    assert info.value.detail == (
        "This cluster runs an array's tasks as one evenly spaced range, and tasks 3, 7, 12 "
        "are not: resubmit the array with the ones to run."
    )


@pytest.mark.parametrize(
    ("walltime", "minutes"),
    [("01:30:00", 90), ("45:00", 45), ("7200", 120), ("00:10:30", None), ("1:00:00:00", None)],
)
def test_only_a_walltime_in_whole_minutes_is_written_back(
    walltime: str, minutes: int | None
) -> None:
    script = f"#!/bin/bash\n#PBS -l walltime={walltime}\necho\n"
    assert read(script, "pbs").request.time_limit_minutes == minutes
