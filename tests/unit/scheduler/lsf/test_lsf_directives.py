"""#BSUB lines read as bsub reads them, and refused with the line, the choices and bsub's words."""

from __future__ import annotations

from pathlib import Path

from app.scheduler.lsf import commands
from app.scheduler.lsf.directives import LsfFacts, check_against, read_bsub_directives
from app.scheduler.types import JobSpec

SEED_GPU_SCRIPT = (
    Path(__file__).resolve().parents[3] / "fixtures" / "lsf" / "gpu-jobscript.sh"
).read_text()
# The development cluster's queues (scripts/lib/lsf-cluster.sh): no "gpu" queue.
DEV = LsfFacts(
    queues=("normal", "short"),
    default_queue="normal",
    run_limits={"normal": 1440, "short": 60},
    max_cores={"normal": 2, "short": 2},
)


def messages(script: str) -> list[tuple[int, str]]:
    return [(p.line, p.message) for p in check_against(read_bsub_directives(script), DEV)]


def test_the_seed_gpu_script_gets_a_plain_answer_on_a_cluster_without_a_gpu_queue() -> None:
    read = read_bsub_directives(SEED_GPU_SCRIPT)
    assert [d.option for d in read.directives] == ["J", "q", "n", "W", "R", "u", "B", "N", "o", "e"]
    assert read.values["o"].value == "gpu_%J.out" and not read.errors and not read.ignored
    assert messages(SEED_GPU_SCRIPT) == [
        (
            4,
            "this cluster has no queue gpu (it has: normal, short) "
            "(bsub: gpu: No such queue. Job not submitted.)",
        )
    ]


def test_too_many_cores_and_too_long_a_run_are_refused_with_the_queues_limits() -> None:
    script = "#!/bin/bash\n#BSUB -n4\n#BSUB -W 1:30 -q short\ntrue\n"
    assert messages(script) == [
        (
            2,
            "4 cores asked, the queue allows at most 2 "
            "(bsub: Too many processors requested. Job not submitted.)",
        ),
        (
            3,
            "90 minutes asked, queue short allows at most 60 "
            "(bsub: RUNLIMIT: Cannot exceed queue's hard limit(s). Job not submitted.)",
        ),
    ]  # fmt: skip


def test_misspelt_and_newer_lsf_options_are_named() -> None:
    script = "#!/bin/bash\n#BSUB -gpu num=1\n#BSUB -X\n#BSUB -W 2h\n#BSUB -n\ntrue\n"
    assert messages(script) == [
        (
            2,
            "this cluster's bsub (OpenLava 2.2) has no -gpu, an option of newer LSF "
            "(bsub: illegal option -- gpu)",
        ),
        (3, "bsub has no option -X (bsub: illegal option -- X)"),
        (5, "-n needs a value (bsub: option requires an argument)"),
        (
            4,
            "-W takes [hours:]minutes, e.g. 90 or 1:30 "
            "(bsub: 2h: Bad RUNLIMIT specification. Job not submitted.)",
        ),
    ]  # fmt: skip


def test_directives_after_the_first_command_are_ignored_as_bsub_does() -> None:
    read = read_bsub_directives("#!/bin/bash\necho hi\n#BSUB -q gpu\n")
    assert [(p.line, p.text) for p in read.ignored] == [(3, "#BSUB -q gpu")]
    assert not read.directives and messages("#!/bin/bash\necho hi\n#BSUB -q gpu\n") == []


def test_the_scripts_own_name_and_output_file_stand() -> None:
    argv = commands.bsub_argv(JobSpec(script=SEED_GPU_SCRIPT, comment="abc"), "alice")
    assert argv[argv.index("-J") + 1] == "gpu_train#portal:abc"
    assert "-o" not in argv  # #BSUB -o gpu_%J.out, not the portal's default
    named = commands.bsub_argv(JobSpec(script=SEED_GPU_SCRIPT, name="mine", stdout="/h/o"), "a")
    assert named[named.index("-J") + 1] == "mine" and named[named.index("-o") + 1] == "/h/o"
