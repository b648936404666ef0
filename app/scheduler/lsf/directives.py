"""Reading a script's ``#BSUB`` lines as bsub reads them, and checking them against a cluster.

bsub (``bsub < job.sh``) takes options from ``#BSUB`` lines before the script's first command,
one-letter options getopt-style (``-n 4`` or ``-n4``), and ignores later ones. This module does
the same and names each problem with its line, the valid choices and the words bsub itself
would print, so a script copied from another cluster (a ``gpu`` queue, LSF 10's ``-gpu``) is
refused before it is sent, in plain words. The script itself is sent unchanged.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from app.scheduler.directives import DirectiveProblem, split_words

PREFIX = "#BSUB"
# OpenLava 2.2's bsub: options taking a value, and flags. Two-letter ones are whole words.
VALUED = frozenset("LcFWkPqRmnJbtuioeMDSfwEa") | {"is", "sp"}
FLAGS = frozenset("hVxHrNBIK") | {"Ip", "Is", "Zs"}
# Options of later LSF releases that a copied script may carry and this bsub lacks.
NEWER = frozenset(
    {"cwd", "gpu", "Jd", "oo", "eo", "env", "app", "G", "g", "ext", "outdir", "hl", "Ep", "ti",
     "ul", "alloc_flags", "data", "U", "C", "T", "We", "rn", "rnc", "jsm", "stage", "json"}
)  # fmt: skip
_RUN_LIMIT = re.compile(r"(?:(\d+):)?(\d+)(?:/\S+)?")
_CORES = re.compile(r"(\d+)(?:,(\d+))?")


@dataclass(frozen=True, slots=True)
class BsubDirective:
    """One option from a ``#BSUB`` line: its letter(s), value and 1-based line number."""

    option: str
    value: str | None
    line: int
    text: str


@dataclass(frozen=True, slots=True)
class BsubScript:
    """What bsub would read from a script, and what it would refuse or ignore."""

    directives: tuple[BsubDirective, ...] = ()
    errors: tuple[DirectiveProblem, ...] = ()
    ignored: tuple[DirectiveProblem, ...] = ()
    values: Mapping[str, BsubDirective] = field(default_factory=dict)
    """The effective directive per option (the last one given wins)."""


@dataclass(frozen=True, slots=True)
class LsfFacts:
    """What the cluster's queues allow: run limits in minutes and most cores per job."""

    queues: Sequence[str]
    default_queue: str
    run_limits: Mapping[str, int] = field(default_factory=dict)
    max_cores: Mapping[str, int] = field(default_factory=dict)


def read_bsub_directives(script: str) -> BsubScript:
    """Read ``script``'s ``#BSUB`` lines (up to its first command)."""
    found: list[BsubDirective] = []
    errors: list[DirectiveProblem] = []
    ignored: list[DirectiveProblem] = []
    in_header = True
    for number, line in enumerate(script.splitlines(), start=1):
        stripped = line.strip()
        if in_header and stripped and not stripped.startswith("#"):
            in_header = False
        if not (line.startswith(PREFIX) and line[len(PREFIX) : len(PREFIX) + 1] in ("", " ", "\t")):
            continue
        if not in_header:
            ignored.append(DirectiveProblem(number, line, _IGNORED))
            continue
        try:
            found += _options(list(split_words(line[len(PREFIX) :])), number, line)
        except ValueError as error:
            errors.append(DirectiveProblem(number, line, str(error)))
    values = {directive.option: directive for directive in found}
    return BsubScript(tuple(found), tuple(errors), tuple(ignored), values)


_IGNORED = "bsub ignores #BSUB lines after the first command; move it above that command"


def _options(words: list[str], number: int, text: str) -> list[BsubDirective]:
    found = []
    index = 0
    while index < len(words):
        word = words[index]
        if not word.startswith("-") or len(word) < 2:
            raise ValueError(f"{word!r} is not an option (bsub's options start with -)")
        name = word[1:]
        if name in FLAGS:
            found.append(BsubDirective(name, None, number, text))
        elif name in VALUED or (name[0] in VALUED and name not in NEWER):
            option = name if name in VALUED else name[0]
            glued = name[len(option) :]
            if not glued and index + 1 >= len(words):
                raise ValueError(f"-{option} needs a value (bsub: option requires an argument)")
            value = glued or words[index + 1]
            index += 0 if glued else 1
            found.append(BsubDirective(option, value, number, text))
        else:
            raise ValueError(_unknown(name))
        index += 1
    return found


def _unknown(name: str) -> str:
    said = f"bsub: illegal option -- {name}"
    if name in NEWER:
        return f"this cluster's bsub (OpenLava 2.2) has no -{name}, an option of newer LSF ({said})"
    return f"bsub has no option -{name} ({said})"


def check_against(read: BsubScript, facts: LsfFacts) -> list[DirectiveProblem]:
    """The script's directives that this cluster would refuse, each with its line, the valid
    choices and bsub's own words."""
    problems = list(read.errors)
    queue = read.values.get("q")
    chosen = queue.value if queue is not None and queue.value else facts.default_queue
    if queue is not None and chosen not in facts.queues:
        choices = ", ".join(sorted(facts.queues))
        problems.append(
            _problem(
                queue,
                f"this cluster has no queue {chosen} (it has: {choices})",
                f"{chosen}: No such queue. Job not submitted.",
            )
        )
    if (cores := read.values.get("n")) is not None:
        problems += _cores_problems(cores, facts.max_cores.get(chosen))
    if (limit := read.values.get("W")) is not None:
        problems += _run_limit_problems(limit, chosen, facts.run_limits.get(chosen))
    return problems


def _cores_problems(directive: BsubDirective, most: int | None) -> list[DirectiveProblem]:
    match = _CORES.fullmatch(directive.value or "")
    if match is None:
        said = f"{directive.value}: Bad argument for option -n. Job not submitted."
        return [_problem(directive, "-n takes a number of cores, e.g. 4 or 2,8", said)]
    wanted = int(match[1])
    if most is not None and wanted > most:
        said = "Too many processors requested. Job not submitted."
        return [_problem(directive, f"{wanted} cores asked, the queue allows at most {most}", said)]
    return []


def _run_limit_problems(
    directive: BsubDirective, queue: str, most: int | None
) -> list[DirectiveProblem]:
    match = _RUN_LIMIT.fullmatch(directive.value or "")
    if match is None:
        said = f"{directive.value}: Bad RUNLIMIT specification. Job not submitted."
        return [_problem(directive, "-W takes [hours:]minutes, e.g. 90 or 1:30", said)]
    minutes = int(match[1] or 0) * 60 + int(match[2])
    if most is not None and minutes > most:
        said = "RUNLIMIT: Cannot exceed queue's hard limit(s). Job not submitted."
        message = f"{minutes} minutes asked, queue {queue} allows at most {most}"
        return [_problem(directive, message, said)]
    return []


def _problem(directive: BsubDirective, message: str, said: str) -> DirectiveProblem:
    return DirectiveProblem(directive.line, directive.text, f"{message} (bsub: {said})")
