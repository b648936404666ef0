"""Reading a batch script's ``#PBS`` lines the way qsub reads them, and checking them against
the cluster before submission.

qsub takes options from ``#PBS`` lines up to the first line that is neither blank nor a comment,
as sbatch does with ``#SBATCH``; words split on blanks, quotes group. Each problem names its line,
the valid choices and what PBS itself would say (its own words, so a user who knows PBS
recognises them). The script is sent as is: nothing here changes it.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from dataclasses import dataclass

from app.scheduler.directives import Directive, DirectiveProblem, ScriptDirectives, split_words
from app.scheduler.nodes import NodesReport
from app.scheduler.types import PartitionInfo

PREFIX = "#PBS"

# qsub's options: letter -> whether it takes a value (OpenPBS 23.06 qsub(1B)).
OPTIONS: dict[str, bool] = {
    "a": True, "A": True, "c": True, "C": True, "e": True, "f": False, "h": False,
    "I": False, "j": True, "J": True, "k": True, "l": True, "m": True, "M": True,
    "N": True, "o": True, "p": True, "P": True, "q": True, "r": True, "R": True,
    "S": True, "u": True, "v": True, "V": False, "W": True, "X": False, "z": False,
}  # fmt: skip

# Resources a job may ask for with -l on an OpenPBS server as installed (qmgr "list resource").
RESOURCES = frozenset(
    {
        "select", "place", "walltime", "ncpus", "mem", "vmem", "ngpus", "nodect", "cput",
        "pcput", "pmem", "pvmem", "file", "host", "vnode", "arch", "software", "mpiprocs",
        "ompthreads", "min_walltime", "max_walltime", "preempt_targets", "site", "naccelerators",
        "accelerator", "accelerator_model", "accelerator_memory", "nchunk", "start_time",
    }
)  # fmt: skip

_IGNORED = "qsub ignores #PBS lines after the first command; move it above that command"


def read_pbs_directives(script: str) -> ScriptDirectives:
    """``script``'s #PBS directives: option letters (``-l`` once per resource, as ``l:NAME``),
    and the lines qsub would refuse or ignore."""
    directives: list[Directive] = []
    errors: list[DirectiveProblem] = []
    ignored: list[DirectiveProblem] = []
    in_header = True
    for number, line in enumerate(script.splitlines(), start=1):
        stripped = line.strip()
        if in_header and stripped and not stripped.startswith("#"):
            in_header = False
        if not (line.startswith(PREFIX) and line[len(PREFIX) : len(PREFIX) + 1].isspace()):
            continue
        if not in_header:
            ignored.append(DirectiveProblem(number, line, _IGNORED))
            continue
        found, problem = _parse_line(line[len(PREFIX) :], number)
        directives += found
        if problem is not None:
            errors.append(DirectiveProblem(number, line, problem))
    values = {d.option: d.value for d in directives}
    return ScriptDirectives(tuple(directives), tuple(errors), tuple(ignored), values)


def _parse_line(rest: str, number: int) -> tuple[list[Directive], str | None]:
    try:
        words = list(split_words(rest))
    except ValueError as error:
        return [], str(error)
    found: list[Directive] = []
    index = 0
    while index < len(words):
        word = words[index]
        letter = word[1:2] if word.startswith("-") and len(word) > 1 else ""
        if letter not in OPTIONS:
            return found, _unknown_option(word)
        value: str | None = None
        if OPTIONS[letter]:
            value = word[2:] or (words[index + 1] if index + 1 < len(words) else None)
            if value is None:
                return (
                    found,
                    f"-{letter} needs a value "
                    f"(PBS says: qsub: option requires an argument -- '{letter}')",
                )
            index += 0 if word[2:] else 1
        index += 1
        if letter == "l" and value is not None:
            resources, problem = _resources(value, number)
            found += resources
            if problem is not None:
                return found, problem
            continue
        found.append(Directive(letter, value, number))
    return found, None


def _unknown_option(word: str) -> str:
    if not word.startswith("-"):
        return f"{word!r} is not an option (options start with -)"
    letter = word[1:2]
    return f"qsub has no option -{letter} (PBS says: qsub: invalid option -- '{letter}')"


def _resources(value: str, number: int) -> tuple[list[Directive], str | None]:
    """``-l select=1:ncpus=2,walltime=1:00:00`` as one directive per resource."""
    found: list[Directive] = []
    for item in value.split(","):
        name, equals, amount = item.partition("=")
        if name not in RESOURCES:
            close = difflib.get_close_matches(name, sorted(RESOURCES), n=1, cutoff=0.45)
            hint = f" (did you mean {close[0]}?)" if close else ""
            return found, (
                f"PBS has no resource {name}{hint} "
                f"(PBS says: qsub: Unknown resource Resource_List.{name})"
            )
        if not equals:
            return found, f"-l {name} needs a value, e.g. -l {name}=..."
        found.append(Directive(f"l:{name}", amount, number))
    return found, None


@dataclass(frozen=True, slots=True)
class ChunkRequest:
    """One ``select`` statement's chunks: how many, and CPUs each."""

    count: int
    ncpus: int


def select_chunks(select: str) -> list[ChunkRequest]:
    """``2:ncpus=4:mem=1gb+1:ncpus=8`` -> [(2, 4), (1, 8)]; a chunk without ncpus has 1."""
    chunks = []
    for part in select.split("+"):
        fields = part.split(":")
        count = int(fields[0]) if fields[0].isdigit() else 1
        cpus = next((int(f[6:]) for f in fields if f.startswith("ncpus=") and f[6:].isdigit()), 1)
        chunks.append(ChunkRequest(count, cpus))
    return chunks


def check_against_cluster(
    read: ScriptDirectives, queues: Sequence[PartitionInfo], nodes: NodesReport
) -> list[DirectiveProblem]:
    """The queue and the CPUs the directives ask for, against the cluster's queues and nodes."""
    problems: list[DirectiveProblem] = []
    by_line = {d.option: d for d in read.directives}
    queue = by_line.get("q")
    names = sorted(q.name for q in queues)
    if queue is not None and queue.value not in names:
        problems.append(
            DirectiveProblem(
                queue.line,
                f"#PBS -q {queue.value}",
                f"queue {queue.value} does not exist (this cluster has: {', '.join(names)}) "
                "(PBS says: qsub: Unknown queue)",
            )
        )
    select = by_line.get("l:select")
    most = max((n.cpus_total for n in nodes.nodes), default=0)
    if select is not None and select.value:
        for chunk in select_chunks(select.value):
            if chunk.ncpus > most:
                problems.append(
                    DirectiveProblem(
                        select.line,
                        f"#PBS -l select={select.value}",
                        f"{chunk.ncpus} CPUs in one chunk, but no node has more than {most} "
                        "(PBS says: Can Never Run: Insufficient amount of resource: ncpus "
                        f"(R: {chunk.ncpus} A: {most} T: {most}))",
                    )
                )
    return problems
