"""#PBS lines read as qsub reads them, and checked against the cluster's queues and nodes."""

from app.scheduler.nodes import NodeInfo, NodesReport, NodeState
from app.scheduler.pbs.directives import check_against_cluster, read_pbs_directives
from app.scheduler.types import PartitionInfo

SCRIPT = """#!/bin/bash
#PBS -N gpu_job -q gpu
#PBS -l select=1:ncpus=8:mem=4gb
#PBS -l walltime=01:00:00
#PBS -M alice@example.org -m abe
#PBS -o gpu.out -j oe

cd "$PBS_O_WORKDIR"
#PBS -q late
python train.py
"""


def queue(name: str, default: bool = False) -> PartitionInfo:
    return PartitionInfo(name, None, None, default, "up", 1, 1, 2, 2)


NODES = NodesReport(nodes=(NodeInfo("pbshead", NodeState.IDLE, cpus_total=2),))


def test_options_and_resources_are_read_up_to_the_first_command() -> None:
    read = read_pbs_directives(SCRIPT)
    assert read.get("N") == "gpu_job" and read.get("q") == "gpu"
    assert read.get("l:select") == "1:ncpus=8:mem=4gb"
    assert read.get("l:walltime") == "01:00:00"
    assert read.get("m") == "abe" and read.has("j")
    assert not read.errors
    assert [(p.line, p.message) for p in read.ignored] == [
        (9, "qsub ignores #PBS lines after the first command; move it above that command")
    ]


def test_a_misspelt_resource_is_named_with_the_closest_one_and_pbs_own_words() -> None:
    read = read_pbs_directives("#!/bin/bash\n#PBS -l wallclock=1:00:00\ntrue\n")
    [problem] = read.errors
    assert problem.line == 2
    assert problem.message == (
        "PBS has no resource wallclock (did you mean walltime?) "
        "(PBS says: qsub: Unknown resource Resource_List.wallclock)"
    )


def test_an_unknown_option_says_what_qsub_says() -> None:
    [problem] = read_pbs_directives("#PBS -Y\n").errors
    assert problem.message == "qsub has no option -Y (PBS says: qsub: invalid option -- 'Y')"


def test_an_unknown_queue_and_too_many_cores_are_refused_with_the_choices() -> None:
    read = read_pbs_directives(SCRIPT)
    problems = check_against_cluster(read, [queue("workq", True)], NODES)
    assert [(p.line, p.message) for p in problems] == [
        (2, "queue gpu does not exist (this cluster has: workq) (PBS says: qsub: Unknown queue)"),
        (
            3,
            "8 CPUs in one chunk, but no node has more than 2 (PBS says: Can Never Run: "
            "Insufficient amount of resource: ncpus (R: 8 A: 2 T: 2))",
        ),
    ]


def test_a_script_that_fits_has_no_problem() -> None:
    script = "#!/bin/bash\n#PBS -q gpu\n#PBS -l select=1:ncpus=2\ntrue\n"
    read = read_pbs_directives(script)
    assert check_against_cluster(read, [queue("workq", True), queue("gpu")], NODES) == []
