"""Researchers' own sbatch scripts read into job requests, as tutorials write them."""

from __future__ import annotations

import pytest

from app.errors import ValidationFailed
from app.jobs.scripts import ScriptJob, overrides_from_options, read_script
from app.scheduler import directive_values as values

HOME = "/home/alice"

GPU_TRAINING = """#!/bin/bash
#SBATCH --job-name=resnet
#SBATCH --account=def-someuser
#SBATCH --partition=debug
#SBATCH --time=0-00:30
#SBATCH --gres=gpu:a100:1
#SBATCH --cpus-per-task=6
#SBATCH --mem=32000M
#SBATCH --output=logs/%x-%j.out
#SBATCH --error=logs/%x-%j.err

module load python/3.11
source $SLURM_TMPDIR/env/bin/activate
arr=(a b c); echo "${#arr[@]} {{ not a template }}"
python train.py "$1"
"""


def read(script: str, *options: tuple[str, str | None], args: tuple[str, ...] = ()):
    job = ScriptJob(1, script, args, overrides_from_options(options), name="job.sh")
    return read_script(job, "physics", HOME)


def test_the_scripts_own_directives_become_the_request_and_the_script_is_untouched() -> None:
    result = read(GPU_TRAINING, args=("run-1",))
    request = result.request
    assert request.script == GPU_TRAINING
    assert request.args == ("run-1",)
    assert (request.name, request.partition, request.time_limit_minutes) == ("resnet", "debug", 30)
    assert (request.gpus, request.gpu_type, request.cpus_per_task) == (1, "a100", 6)
    assert request.memory_mb == 32000
    assert request.stdout_path == "/home/alice/logs/%x-%j.out"
    assert request.stderr_path == "/home/alice/logs/%x-%j.err"
    assert request.work_dir == HOME


def test_an_account_other_than_the_projects_is_said() -> None:
    [warning] = read(GPU_TRAINING).warnings
    assert "def-someuser" in warning and "physics" in warning


def test_overrides_win_like_sbatchs_command_line() -> None:
    request = read(GPU_TRAINING, ("partition", "long"), ("time", "2:00:00")).request
    assert (request.partition, request.time_limit_minutes) == ("long", 120)


def test_without_output_the_log_is_sbatchs_default_in_the_working_directory() -> None:
    script = "#!/bin/bash\n#SBATCH --chdir=/scratch/alice/run\n#SBATCH --array=1-3%1\necho\n"
    request = read(script).request
    assert request.work_dir == "/scratch/alice/run"
    assert request.stdout_path == "/scratch/alice/run/slurm-%A_%a.out"
    assert request.array_spec == "1-3%1"
    assert read("#!/bin/bash\necho hi\n").request.stdout_path == "/home/alice/slurm-%j.out"
    assert read("#!/bin/bash\necho hi\n").request.name == "job.sh"


def test_a_misspelt_directive_is_refused_with_the_line_and_the_closest_option() -> None:
    with pytest.raises(ValidationFailed) as info:
        read("#!/bin/bash\n#SBATCH --ntaks-per-node=4\nsrun hostname\n")
    expected = "line 2: sbatch has no option --ntaks-per-node (did you mean --ntasks-per-node?)"
    assert info.value.fields == {"script": expected}


def test_a_directive_after_the_first_command_is_a_warning_not_a_value() -> None:
    result = read("#!/bin/bash\necho start\n#SBATCH --time=10\n")
    assert result.request.time_limit_minutes is None
    [warning] = result.warnings
    assert warning.startswith("line 3: sbatch ignores #SBATCH lines after the first command")


@pytest.mark.parametrize("bad", ["--time=2:00:00:00", "--mem=1.5G", "--nodes=zero"])
def test_values_sbatch_would_refuse_are_refused_first(bad: str) -> None:
    with pytest.raises(ValidationFailed) as info:
        read(f"#!/bin/bash\n#SBATCH {bad}\ntrue\n")
    assert "Invalid" in info.value.fields["script"]


@pytest.mark.parametrize(
    ("text", "minutes"),
    [
        ("90", 90),
        ("1:30", 2),
        ("1:00:00", 60),
        ("0-03", 180),
        ("1-00:00:00", 1440),
        ("2-1:30", 2970),
    ],
)
def test_time_forms(text: str, minutes: int) -> None:
    assert values.time_minutes(text) == minutes


@pytest.mark.parametrize(
    ("text", "mb"), [("32000M", 32000), ("4G", 4096), ("1Gb", 1024), ("512", 512), ("2048K", 2)]
)
def test_memory_forms(text: str, mb: int) -> None:
    assert values.memory_mb(text) == mb


def test_gpu_forms() -> None:
    assert values.gpus("gpu:a100:2", None, None) == values.GpuRequest(2, "a100")
    assert values.gpus("gpu", None, None) == values.GpuRequest(1, "")
    assert values.gpus(None, "v100:4", None) == values.GpuRequest(4, "v100")
    assert values.gpus(None, None, "2") == values.GpuRequest(2, "")
    assert values.gpus(None, None, None) is None


def test_a_script_file_name_becomes_a_valid_job_name_when_the_script_sets_none() -> None:
    job = ScriptJob(1, "#!/bin/bash\ntrue\n", name="my run (v2).sh")
    assert read_script(job, "physics", HOME).request.name == "my run _v2_.sh"
