"""Any job as a script to edit and submit again: what the form shows is what runs."""

from __future__ import annotations

import subprocess

from hypothesis import example, given, settings
from hypothesis import strategies as st

from app.jobs.editable import editable_script
from app.jobs.scripts import ScriptJob, read_script
from app.models.jobs import Job
from app.scheduler.directives import read_directives

HOME = "/home/alice"
TEMPLATE_SCRIPT = '#!/bin/bash\n# greeting\n\necho "${PORTAL_PARAM_message}"\necho done\n'
OWN_SCRIPT = """#!/bin/bash
#SBATCH --job-name=sweep
#SBATCH --partition=debug
#SBATCH --time=00:05:00

echo "$1"
"""


def template_job(message: str, **fields: object) -> Job:
    values: dict[str, object] = {
        "template_version_id": 7,
        "script": TEMPLATE_SCRIPT,
        "environment": {"PORTAL_PARAM_message": message},
        "name": "my run",
        "partition": "debug",
        "qos": "normal",
        "time_limit_minutes": 90,
        "cpus_per_task": 2,
        "ntasks": 1,
        "memory_mb": 1024,
        "gpus": 1,
        "gpu_type": "a100",
        "array_spec": "1-3%1",
        "work_dir": f"{HOME}/run dir",
        "stdout_path": f"{HOME}/run dir/%x-%A_%a.out",
        "stderr_path": f"{HOME}/run dir/%x-%A_%a.err",
    }
    return Job(**(values | fields))


def run_in_bash(script: str) -> str:
    # Bytes, not text mode: text mode would turn a value's CRLF into LF on the way back.
    done = subprocess.run(
        ["bash", "-s"], input=script.encode(), capture_output=True, timeout=10, check=True
    )
    return done.stdout.decode()


def through_a_text_area(script: str) -> str:
    """What the script form receives back: browsers send every line break as CRLF."""
    normalized = script.replace("\r\n", "\n").replace("\r", "\n").replace("\n", "\r\n")
    return normalized.replace("\r\n", "\n")


def test_a_template_job_becomes_a_script_that_asks_for_what_the_job_ran_with() -> None:
    job = template_job("hello")
    script = editable_script(job)
    request = read_script(ScriptJob(1, script, name="ignored"), "physics", HOME).request
    assert not read_directives(script).ignored
    ran_with = (
        job.name,
        job.partition,
        job.qos,
        job.time_limit_minutes,
        job.cpus_per_task,
        job.ntasks,
        job.memory_mb,
        job.gpus,
        job.gpu_type,
        job.array_spec,
        job.work_dir,
        job.stdout_path,
        job.stderr_path,
    )
    asks_for = (
        request.name,
        request.partition,
        request.qos,
        request.time_limit_minutes,
        request.cpus_per_task,
        request.ntasks,
        request.memory_mb,
        request.gpus,
        request.gpu_type,
        request.array_spec,
        request.work_dir,
        request.stdout_path,
        request.stderr_path,
    )
    assert asks_for == ran_with
    assert script.startswith("#!/bin/bash\n# greeting\n\n#SBATCH --job-name=")
    assert script.endswith('echo "${PORTAL_PARAM_message}"\necho done\n')


@settings(max_examples=60, deadline=None)
@example(message='a\r\nb\' "$(id)" `id`\\\x7f ${HOME}\n#SBATCH --partition=long')
@given(message=st.text(st.characters(exclude_categories=("Cs",), exclude_characters="\x00")))
def test_a_parameter_value_from_the_environment_is_in_the_script_and_only_data(
    message: str,
) -> None:
    script = through_a_text_area(editable_script(template_job(message)))
    assert run_in_bash(script) == f"{message}\ndone\n"


def test_an_own_script_without_overrides_is_given_back_byte_for_byte() -> None:
    job = Job(script=OWN_SCRIPT, name="sweep", partition="debug", time_limit_minutes=5)
    assert editable_script(job) == OWN_SCRIPT


def test_overrides_of_an_own_script_are_written_where_they_win() -> None:
    job = Job(script=OWN_SCRIPT, name="renamed", partition="long", time_limit_minutes=30)
    job.cpus_per_task, job.memory_mb = 4, 2048
    script = editable_script(job)
    read = read_directives(script)
    assert not read.ignored and not read.errors
    assert (read.get("job-name"), read.get("partition"), read.get("time")) == (
        "renamed",
        "long",
        "30",
    )
    assert (read.get("cpus-per-task"), read.get("mem")) == ("4", "2048M")
    assert script.endswith('\necho "$1"\n') and script.startswith(OWN_SCRIPT.split("\n\n")[0])
