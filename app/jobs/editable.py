"""Any job as a script its submitter can edit and submit again as their own.

A job from a template ran with sbatch options on the command line and, for parameter values
that are not inert words, ``PORTAL_PARAM_*`` variables in its environment (ADR 0009); a
script submitted with overrides (``hpcportal submit job.sh -p long``) ran with options its
text does not hold. The script alone would therefore run differently. The editable script
carries what it lacks: the options as ``#SBATCH`` lines at the end of the script's own header
(a later line wins, as the command line did), the variables as ``export`` lines just before
the first command. What the form shows is exactly what will run; nothing is hidden.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable
from typing import TypeVar

from app.models.jobs import Job
from app.scheduler import directive_values as values
from app.scheduler.directives import read_directives

T = TypeVar("T")

SHEBANG = "#!/bin/bash"


def editable_script(job: Job) -> str:
    """The script to prefill "Edit and resubmit" with; a raw script's own text as it is
    when nothing overrode its ``#SBATCH`` lines."""
    from_template = job.template_version_id is not None or bool(job.environment)
    added = (_directives(job) if from_template else _overrides(job)) + _exports(job)
    if not added:
        return job.script
    lines = job.script.split("\n")
    if not lines or not lines[0].startswith("#!"):
        lines.insert(0, SHEBANG)
    first_command = next(
        (i for i, line in enumerate(lines) if line.strip() and not line.lstrip().startswith("#")),
        len(lines),
    )
    return "\n".join(lines[:first_command] + added + lines[first_command:])


def _directives(job: Job) -> list[str]:
    gpus = None
    if job.gpus:
        gpus = ":".join(p for p in ("gpu", job.gpu_type, str(job.gpus)) if p)
    options = (
        ("job-name", job.name),
        ("partition", job.partition),
        ("qos", job.qos),
        ("time", job.time_limit_minutes),
        ("nodes", job.nodes),
        ("ntasks", job.ntasks),
        ("cpus-per-task", job.cpus_per_task),
        ("mem", f"{job.memory_mb}M" if job.memory_mb else None),
        ("gres", gpus),
        ("array", job.array_spec),
        ("chdir", job.work_dir),
        ("output", job.stdout_path),
        ("error", job.stderr_path),
    )
    written = (_directive(option, value) for option, value in options if value is not None)
    return [line for line in written if line is not None]


def _overrides(job: Job) -> list[str]:
    """Lines for what the job ran with that its script's own lines do not say."""
    read = read_directives(job.script)
    pairs = (
        ("partition", job.partition, read.get("partition")),
        ("time", job.time_limit_minutes, _parsed(values.time_minutes, read.get("time"))),
        ("cpus-per-task", job.cpus_per_task, _parsed(int, read.get("cpus-per-task"))),
        ("mem", job.memory_mb, _parsed(values.memory_mb, read.get("mem"))),
        ("array", job.array_spec, read.get("array")),
    )
    lines = []
    if read.get("job-name") not in (None, job.name):
        lines.append(_directive("job-name", job.name))
    for option, ran_with, written in pairs:
        if ran_with is not None and ran_with != written:
            shown = f"{ran_with}M" if option == "mem" else ran_with
            lines.append(_directive(option, shown))
    return [line for line in lines if line is not None]


def _parsed(parse: Callable[[str], T], text: str | None) -> T | None:
    try:
        return None if text is None else parse(text)
    except ValueError:
        return None


def _directive(option: str, value: object) -> str | None:
    """``#SBATCH --option=value``, quoted when sbatch would otherwise split or cut it."""
    text = str(value)
    if "\n" in text or "\r" in text:
        return None
    if text and not any(c.isspace() or c in "\"'#" for c in text):
        return f"#SBATCH --{option}={text}"
    for quote in ('"', "'"):
        if quote not in text:
            return f"#SBATCH --{option}={quote}{text}{quote}"
    return None


def _exports(job: Job) -> list[str]:
    return [
        f"export {name}={_quoted(value)}"
        for name, value in sorted((job.environment or {}).items())
        if name.isidentifier() and name.isascii()
    ]


def _quoted(value: str) -> str:
    """``value`` as one shell word that survives a text area.

    Browsers turn every line break in a text area into CRLF and the form turns CRLF back
    into LF, so a carriage return inside quotes would be lost; ``$'…'`` spells control
    characters out instead.
    """
    if all(c == "\n" or c.isprintable() for c in value):
        return shlex.quote(value)
    escaped = "".join(_escaped(c) for c in value)
    return f"$'{escaped}'"


def _escaped(char: str) -> str:
    if char in "\\'":
        return "\\" + char
    if ord(char) < 32 or ord(char) == 127:
        return f"\\x{ord(char):02x}"
    return char
