"""A researcher's own sbatch script as a job request: what sbatch would read, the portal reads.

The script is sent byte for byte; nothing in it is interpreted as template syntax. Its
``#SBATCH`` lines (and overrides given the way sbatch's command line gives them) decide the
job's name, partition, time, resources, array and log paths, which the portal stores, checks
before sbatch and shows. What sbatch would refuse is refused here first, in its own terms
and with the closest valid option; what it would silently ignore is said as a warning.
On a PBS or LSF cluster the script's ``#PBS`` or ``#BSUB`` lines are read instead, by that
scheduler's reader (``app/jobs/script_readers.py``).
"""

from __future__ import annotations

import dataclasses
import posixpath
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from app.errors import ValidationFailed
from app.jobs.requests import JobRequest
from app.jobs.script_readers import lsf_request, pbs_request
from app.scheduler import directive_values as values
from app.scheduler.directives import Directive, ScriptDirectives, read_directives

DEFAULT_NAME = "script"
T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class ScriptJob:
    """A script as submitted: the text, its arguments and sbatch-style overrides."""

    project_id: int
    script: str
    args: tuple[str, ...] = ()
    overrides: tuple[Directive, ...] = ()
    name: str | None = None
    """The job name when the script sets none (sbatch uses the script's file name)."""


@dataclass(frozen=True, slots=True)
class ReadScript:
    """The request the script makes, what sbatch read from it, and what it would ignore."""

    request: JobRequest
    directives: ScriptDirectives
    warnings: tuple[str, ...]


def read_script(job: ScriptJob, account: str, home: str, scheduler: str = "slurm") -> ReadScript:
    """The JobRequest ``job`` makes on a cluster run by ``scheduler``, read with that
    scheduler's directives; ValidationFailed naming every option it would refuse."""
    if scheduler in _OTHERS:
        return _read_other(job, account, home, scheduler)
    read = read_directives(job.script, job.overrides)
    if read.errors:
        lines = [f"line {e.line}: {e.message}" if e.line else e.message for e in read.errors]
        raise ValidationFailed(
            "sbatch would refuse this script: " + "; ".join(lines),
            {"script": "; ".join(lines)},
        )
    try:
        request = _request(job, read, home)
    except ValueError as error:
        raise ValidationFailed(str(error), {"script": str(error)}) from error
    warnings = [f"line {p.line}: {p.message} ({p.text.strip()})" for p in read.ignored]
    asked = read.get("account")
    if asked is not None and asked != account:
        warnings.append(
            f"the script asks for account {asked}; the job is charged to this project's "
            f"account {account}"
        )
    return ReadScript(dataclasses.replace(request, warnings=tuple(warnings)), read, tuple(warnings))


# Per scheduler: its directive prefix, the option naming an account, its reader.
_OTHERS = {"pbs": ("#PBS", "A", pbs_request), "lsf": ("#BSUB", "P", lsf_request)}


def _read_other(job: ScriptJob, account: str, home: str, scheduler: str) -> ReadScript:
    prefix, account_option, reader = _OTHERS[scheduler]
    if job.overrides:
        message = (
            f"on this cluster options are read from the script's {prefix} lines; write them there"
        )
        raise ValidationFailed(message, {"script": message})
    request, read = reader(job.project_id, job.script, home, _name_from_file(job.name))
    warnings = [f"line {p.line}: {p.message} ({p.text.strip()})" for p in read.ignored]
    asked = read.get(account_option)
    if asked is not None and asked != account:
        warnings.append(
            f"the script asks for project {asked}; the job is charged to this project's "
            f"account {account}"
        )
    request = dataclasses.replace(request, args=tuple(job.args), warnings=tuple(warnings))
    return ReadScript(request, read, tuple(warnings))


def _request(job: ScriptJob, read: ScriptDirectives, home: str) -> JobRequest:
    work_dir = _absolute(read.get("chdir"), home) if read.get("chdir") else home
    array = read.get("array")
    gpus = values.gpus(read.get("gres"), read.get("gpus-per-node"), read.get("gpus"))
    default_log = "slurm-%A_%a.out" if array else "slurm-%j.out"
    return JobRequest(
        project_id=job.project_id,
        script=job.script,
        args=tuple(job.args),
        name=read.get("job-name") or _name_from_file(job.name),
        partition=read.get("partition"),
        qos=read.get("qos"),
        time_limit_minutes=_maybe(values.time_minutes, read.get("time")),
        nodes=_maybe(values.node_count, read.get("nodes")),
        ntasks=_maybe(lambda v: values.whole_number("ntasks", v), read.get("ntasks")),
        cpus_per_task=_maybe(
            lambda v: values.whole_number("cpus-per-task", v), read.get("cpus-per-task")
        ),
        memory_mb=_maybe(values.memory_mb, read.get("mem")),
        gpus=gpus.count if gpus else None,
        gpu_type=(gpus.type or None) if gpus else None,
        array_spec=array,
        work_dir=work_dir,
        # sbatch's own default, made explicit so the portal knows where the log is.
        stdout_path=_absolute(read.get("output") or default_log, work_dir),
        stderr_path=_absolute(read.get("error"), work_dir) if read.get("error") else None,
    )


def _name_from_file(file_name: str | None) -> str:
    """sbatch names a job after its script file; kept to the characters job names allow."""
    cleaned = re.sub(r"[^A-Za-z0-9_.+ -]", "_", file_name or "").strip(" ")[:128]
    return cleaned if cleaned and cleaned[0] not in " " else DEFAULT_NAME


def _maybe(parse: Callable[[str], T], text: str | None) -> T | None:
    return None if text is None else parse(text)


def _absolute(path: str | None, base: str) -> str:
    """A path as sbatch resolves it: relative to the job's working directory."""
    assert path is not None
    return posixpath.normpath(posixpath.join(base, path))


def overrides_from_options(options: Sequence[tuple[str, str | None]]) -> tuple[Directive, ...]:
    """Overrides from (long option, value) pairs, as a surface collects them."""
    return tuple(Directive(option.lstrip("-"), value) for option, value in options)
