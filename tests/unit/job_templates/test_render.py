import subprocess
from typing import Any

import pytest

from app.errors import ValidationFailed
from app.job_templates.context import PartitionChoice, SubmitContext
from app.job_templates.render import render, script_problem
from app.models.job_templates import TemplateVersion
from app.models.projects import Project
from app.scheduler.slurm.commands import sbatch_argv
from app.scheduler.types import Gres, JobSpec
from app.scheduler.validation import validate_spec

SCHEMA: dict[str, Any] = {
    "parameters": [
        {"name": "message", "label": "Message", "type": "text"},
        {"name": "steps", "label": "Steps", "type": "integer", "min": 1, "max": 100},
        {"name": "partition", "label": "Partition", "type": "partition", "maps_to": "partition"},
        {"name": "time", "label": "Time", "type": "duration", "maps_to": "time_limit"},
        {
            "name": "mem",
            "label": "Memory",
            "type": "memory",
            "maps_to": "memory",
            "required": False,
        },
        {"name": "gpu", "label": "GPUs", "type": "gpu", "maps_to": "gpus", "required": False},
        {"name": "out", "label": "Output", "type": "path", "maps_to": "stdout"},
        {"name": "tasks", "label": "Tasks", "type": "text", "maps_to": "array", "required": False},
        {"name": "verbose", "label": "Verbose", "type": "boolean", "required": False},
    ]
}
SCRIPT = (
    "#!/bin/bash\n#SBATCH --comment=fixed\n"
    "echo {{ message }}\nrun --steps {{ steps }}{% if verbose %} -v{% endif %}\n"
)
CONTEXT = SubmitContext(
    cluster="testcluster",
    accounts=("physics",),
    partitions=(PartitionChoice("debug", 60, True), PartitionChoice("long", 10080)),
    gpu_types=("a100",),
    home="/home/alice",
)
GOOD = {
    "message": "hello",
    "steps": "10",
    "partition": "debug",
    "time": "0:30:00",
    "mem": "4G",
    "gpu": {"type": "a100", "count": "1"},
    "out": "~/portal-jobs/%x-%j.out",
    "account": "physics",
    "job_name": "my run",
}
HOSTILE = [
    "$(rm -rf ~)",
    "`id`",
    "x'; touch /tmp/pwned; echo '",
    "a\n#SBATCH --account=chemistry",
    "nul\x00byte",
    "x" * 5000,
    "${HOME}",
]


def version(script: str = SCRIPT, schema: dict[str, Any] | None = None) -> TemplateVersion:
    return TemplateVersion(
        id=7,
        template_id=3,
        version=1,
        script=script,
        parameter_schema=schema or SCHEMA,
        defaults={"job_name": "demo"},
    )


def project() -> Project:
    return Project(id=5, name="physics", slurm_account="physics", cluster="testcluster")


def fields_of(error: pytest.ExceptionInfo[ValidationFailed]) -> dict[str, str]:
    return error.value.fields


def test_valid_values_become_resources_not_script_lines() -> None:
    request = render(version(), GOOD, project(), CONTEXT)
    assert request.project_id == 5
    assert request.template_version_id == 7
    assert request.name == "my run"
    assert request.partition == "debug"
    assert request.time_limit_minutes == 30
    assert request.memory_mb == 4096
    assert (request.gpus, request.gpu_type) == (1, "a100")
    assert request.stdout_path == "/home/alice/portal-jobs/%x-%j.out"
    assert request.script == "#!/bin/bash\n#SBATCH --comment=fixed\necho hello\nrun --steps 10\n"


@pytest.mark.parametrize("hostile", HOSTILE[:3] + HOSTILE[6:])
def test_hostile_text_reaches_the_script_only_as_one_quoted_word(hostile: str) -> None:
    request = render(version(), {**GOOD, "message": hostile}, project(), CONTEXT)
    echo_line = request.script.splitlines()[2]
    # The value is not in the script at all: it travels in the job's environment.
    assert echo_line == 'echo "${PORTAL_PARAM_message}"'
    assert request.environment == {"PORTAL_PARAM_message": hostile}
    # The shell itself agrees that the value is one literal argument.
    result = subprocess.run(
        ["bash", "-c", echo_line],
        capture_output=True,
        text=True,
        check=True,
        env={"PATH": "/usr/bin:/bin", **request.environment},
    )
    assert result.stdout == hostile + "\n"


@pytest.mark.parametrize("hostile", HOSTILE[3:6])
def test_multiline_nul_and_overlong_text_is_refused(hostile: str) -> None:
    with pytest.raises(ValidationFailed) as error:
        render(version(), {**GOOD, "message": hostile}, project(), CONTEXT)
    assert set(fields_of(error)) == {"message"}


@pytest.mark.parametrize("field", ["partition", "time", "mem", "out", "tasks", "steps", "job_name"])
@pytest.mark.parametrize("hostile", HOSTILE[:6])
def test_hostile_values_never_reach_sbatch_options(field: str, hostile: str) -> None:
    with pytest.raises(ValidationFailed) as error:
        render(version(), {**GOOD, field: hostile}, project(), CONTEXT)
    assert field in fields_of(error)


def test_home_variable_in_a_path_is_expanded_by_the_portal_not_the_shell() -> None:
    request = render(version(), {**GOOD, "out": "${HOME}/x-%j.out"}, project(), CONTEXT)
    assert request.stdout_path == "/home/alice/x-%j.out"


def test_hostile_gpu_type_is_refused() -> None:
    with pytest.raises(ValidationFailed) as error:
        render(version(), {**GOOD, "gpu": {"type": "a100,gpu:9", "count": "1"}}, project(), CONTEXT)
    assert "no GPU type" in fields_of(error)["gpu"]


def test_rendered_request_passes_the_scheduler_validation_and_builds_argv() -> None:
    request = render(version(), {**GOOD, "tasks": "1-10%2"}, project(), CONTEXT)
    spec = JobSpec(
        script=request.script,
        name=request.name,
        account="physics",
        partition=request.partition,
        time_limit=request.time_limit_minutes,
        memory_mb=request.memory_mb,
        gres=(Gres("gpu", request.gpus or 0, request.gpu_type),),
        array=request.array_spec,
        stdout=request.stdout_path,
    )
    validate_spec(spec, CONTEXT.roots)
    argv = sbatch_argv(spec)
    assert "--array=1-10%2" in argv or "1-10%2" in argv


def test_time_over_the_partition_limit_is_explained_next_to_the_field() -> None:
    with pytest.raises(ValidationFailed) as error:
        render(version(), {**GOOD, "time": "2:00:00"}, project(), CONTEXT)
    assert fields_of(error) == {"time": "Partition debug allows at most 1:00:00."}


def test_same_time_is_fine_on_a_longer_partition() -> None:
    request = render(
        version(), {**GOOD, "time": "2:00:00", "partition": "long"}, project(), CONTEXT
    )
    assert request.time_limit_minutes == 120


def test_unknown_partition_lists_the_real_ones() -> None:
    with pytest.raises(ValidationFailed) as error:
        render(version(), {**GOOD, "partition": "gpu"}, project(), CONTEXT)
    assert "debug, long" in fields_of(error)["partition"]


def test_path_outside_allowed_roots_is_refused() -> None:
    with pytest.raises(ValidationFailed) as error:
        render(version(), {**GOOD, "out": "/etc/passwd"}, project(), CONTEXT)
    assert fields_of(error)["out"] == "Must be under /home or /scratch."


def test_path_escaping_with_dotdot_is_refused() -> None:
    with pytest.raises(ValidationFailed) as error:
        render(version(), {**GOOD, "out": "/home/alice/../../etc/x"}, project(), CONTEXT)
    assert "out" in fields_of(error)


def test_account_of_another_project_is_refused() -> None:
    with pytest.raises(ValidationFailed) as error:
        render(version(), {**GOOD, "account": "chemistry"}, project(), CONTEXT)
    assert "chemistry" in fields_of(error)["account"]


def test_missing_required_values_are_all_reported_at_once() -> None:
    with pytest.raises(ValidationFailed) as error:
        render(version(), {"account": "physics"}, project(), CONTEXT)
    assert {"message", "steps", "partition", "time", "out"} <= set(fields_of(error))
    assert fields_of(error)["steps"] == "This field is required."


def test_integer_bounds_are_reported_in_plain_words() -> None:
    with pytest.raises(ValidationFailed) as error:
        render(version(), {**GOOD, "steps": "1000"}, project(), CONTEXT)
    assert fields_of(error)["steps"] == "Must be at most 100."


def test_unchecked_boolean_renders_false_branch() -> None:
    request = render(version(), {**GOOD, "verbose": "on"}, project(), CONTEXT)
    assert "run --steps 10 -v" in request.script


def test_undefined_name_in_script_is_a_script_error() -> None:
    broken = version(script="#!/bin/bash\necho {{ nosuch }}\n")
    with pytest.raises(ValidationFailed) as error:
        render(broken, GOOD, project(), CONTEXT)
    assert "script" in fields_of(error)


def test_sandbox_blocks_attribute_escapes() -> None:
    hostile = version(script="#!/bin/bash\necho {{ message.__class__.__mro__ }}\n")
    with pytest.raises(ValidationFailed) as error:
        render(hostile, GOOD, project(), CONTEXT)
    assert "script" in fields_of(error)


@pytest.mark.parametrize(
    ("source", "fragment"),
    [
        ("echo hi\n", "interpreter line"),
        ("#!/bin/bash\n#SBATCH --time={{ time }}\n", "#SBATCH"),
        ("#!/bin/bash\n{% if %}\n", "syntax"),
    ],
)
def test_script_problems_are_explained(source: str, fragment: str) -> None:
    problem = script_problem(source)
    assert problem is not None and fragment in problem


@pytest.mark.parametrize(
    ("tasks", "message"),
    [
        ("5-1", "5-1 counts down; write the smaller number first (1-5)"),
        ("1-4%0", "%0 would let no task run; write %1 or more, or leave it out for no limit"),
    ],
)
def test_an_array_sbatch_would_refuse_or_never_run_is_explained_at_its_field(
    tasks: str, message: str
) -> None:
    with pytest.raises(ValidationFailed) as error:
        render(version(), {**GOOD, "tasks": tasks}, project(), CONTEXT)
    assert fields_of(error)["tasks"] == f"{message}."


@pytest.mark.parametrize(("typed", "minutes"), [("1:30", 2), ("90", 90), ("1:30:00", 90)])
def test_a_time_is_read_as_sbatch_reads_it(typed: str, minutes: int) -> None:
    values = {**GOOD, "time": typed, "partition": "long"}
    assert render(version(), values, project(), CONTEXT).time_limit_minutes == minutes
