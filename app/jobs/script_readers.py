"""Own scripts on PBS and LSF clusters: their ``#PBS`` / ``#BSUB`` lines as the job request.

Each scheduler's directives are read by its own reader (``app/scheduler/pbs/directives.py``,
``app/scheduler/lsf/directives.py``), chosen by the cluster's scheduler, never by what the
script looks like. The request takes only the values the adapter would pass back on the
command line unchanged (name, queue, walltime, a one-chunk select, a plain core count, the
array, the logs); anything else stays in the script for qsub or bsub to read. The script is
sent byte for byte.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass

from app.errors import ValidationFailed
from app.jobs.requests import JobRequest
from app.scheduler.directives import (
    Directive,
    DirectiveProblem,
    ScriptDirectives,
    read_directives,
)
from app.scheduler.lsf.directives import BsubScript, read_bsub_directives
from app.scheduler.pbs.directives import read_pbs_directives, select_chunks

_WALLTIME = re.compile(r"(?:(?:(\d+):)?(\d+):)?(\d+)")
_LSF_NAME = re.compile(r"(?P<name>[^\[]*)(?:\[(?P<indices>[^\]]+)\](?P<limit>%\d+)?)?")
_LSF_RUN_LIMIT = re.compile(r"(?:(\d+):)?(\d+)")
# LSF's file name patterns as the Slurm ones the portal stores (and turns back into LSF's).
_LSF_PATTERNS = {"J": "%j", "I": "%a", "%": "%%"}


def refuse(command: str, problems: tuple[DirectiveProblem, ...]) -> ValidationFailed:
    """What ``command`` (qsub, bsub) would refuse, each problem with its line."""
    lines = [f"line {p.line}: {p.message}" if p.line else p.message for p in problems]
    return ValidationFailed(
        f"{command} would refuse this script: " + "; ".join(lines), {"script": "; ".join(lines)}
    )


def pbs_request(
    project_id: int, script: str, home: str, name: str
) -> tuple[JobRequest, ScriptDirectives]:
    """The request a ``#PBS`` script makes; ValidationFailed naming what qsub would refuse."""
    read = read_pbs_directives(script)
    if read.errors:
        raise refuse("qsub", read.errors)
    get = read.get
    work_dir = home  # qsub runs in the working folder, which is the home for a script
    nodes, cpus, memory = _one_chunk(get("l:select"))
    request = JobRequest(
        project_id=project_id,
        script=script,
        name=get("N") or name,
        partition=get("q"),
        time_limit_minutes=_pbs_minutes(get("l:walltime")),
        nodes=nodes,
        ntasks=nodes,
        cpus_per_task=cpus,
        memory_mb=memory,
        array_spec=get("J"),
        work_dir=work_dir,
        stdout_path=_pbs_path(get("o"), work_dir),
        stderr_path=_pbs_path(get("e"), work_dir),
    )
    return request, read


def _pbs_minutes(walltime: str | None) -> int | None:
    """PBS's ``[[HH:]MM:]SS`` in minutes; None unless whole (the portal writes walltime back in
    minutes, which must not change the script's own)."""
    match = _WALLTIME.fullmatch(walltime or "")
    if match is None:
        return None
    hours, minutes, seconds = (int(part or 0) for part in match.groups())
    total = hours * 3600 + minutes * 60 + seconds
    return total // 60 if total and total % 60 == 0 else None


def _one_chunk(select: str | None) -> tuple[int | None, int | None, int | None]:
    """Nodes, CPUs each and memory each of ``N:ncpus=C[:mem=M]``; Nones for any other form,
    which then stays the script's own (the adapter would write a different select)."""
    if not select or "+" in select:
        return None, None, None
    fields = select.split(":")
    known = {"ncpus", "mem"}
    if not fields[0].isdigit() or any(f.partition("=")[0] not in known for f in fields[1:]):
        return None, None, None
    chunk = select_chunks(select)[0]
    memory = next((f[4:] for f in fields[1:] if f.startswith("mem=")), None)
    megabytes = _pbs_megabytes(memory) if memory is not None else None
    if memory is not None and megabytes is None:
        return None, None, None
    return chunk.count, chunk.ncpus, megabytes


def _pbs_megabytes(text: str) -> int | None:
    match = re.fullmatch(r"(\d+)(kb|mb|gb|tb)", text.lower())
    if match is None:
        return None
    factor = {"kb": 1 / 1024, "mb": 1, "gb": 1024, "tb": 1024 * 1024}[match[2]]
    amount = int(match[1]) * factor
    return int(amount) if amount == int(amount) else None


def _pbs_path(path: str | None, work_dir: str) -> str | None:
    if not path:
        return None
    # qsub takes [host:]path; the portal reads the file on the login node.
    return posixpath.normpath(posixpath.join(work_dir, path.rpartition(":")[2]))


def lsf_request(
    project_id: int, script: str, home: str, name: str
) -> tuple[JobRequest, ScriptDirectives]:
    """The request a ``#BSUB`` script makes; ValidationFailed naming what bsub would refuse."""
    read = read_bsub_directives(script)
    if read.errors:
        raise refuse("bsub", read.errors)
    values = {option: d.value for option, d in read.values.items()}
    named = _LSF_NAME.fullmatch(values.get("J") or "")
    array = None
    if named is not None and named["indices"]:
        array = named["indices"] + (named["limit"] or "")
    cores = values.get("n")
    request = JobRequest(
        project_id=project_id,
        script=script,
        name=(named["name"] if named is not None and named["name"] else name),
        partition=values.get("q"),
        time_limit_minutes=_lsf_minutes(values.get("W")),
        ntasks=int(cores) if cores and cores.isdigit() else None,
        memory_mb=_lsf_megabytes(values.get("M")),
        array_spec=array,
        work_dir=home,  # bsub runs in the working folder: the home for a script
        stdout_path=_lsf_path(values.get("o"), home),
        stderr_path=_lsf_path(values.get("e"), home),
    )
    return request, as_directives(read)


def _lsf_minutes(limit: str | None) -> int | None:
    match = _LSF_RUN_LIMIT.fullmatch(limit or "")
    return None if match is None else int(match[1] or 0) * 60 + int(match[2])


def _lsf_megabytes(kilobytes: str | None) -> int | None:
    """OpenLava's ``-M`` is in kilobytes; only a whole number of megabytes round-trips."""
    if not kilobytes or not kilobytes.isdigit() or int(kilobytes) % 1024:
        return None
    return int(kilobytes) // 1024


def _lsf_path(path: str | None, work_dir: str) -> str | None:
    if not path:
        return None
    slurm_style = re.sub(r"%(.)", lambda m: _LSF_PATTERNS.get(m[1], m[0]), path)
    return posixpath.normpath(posixpath.join(work_dir, slurm_style))


def as_directives(read: BsubScript) -> ScriptDirectives:
    """bsub's reading in the shape every surface shows (option letters as names)."""
    found = tuple(Directive(d.option, d.value, d.line) for d in read.directives)
    values = {d.option: d.value for d in found}
    return ScriptDirectives(found, read.errors, read.ignored, values)


@dataclass(frozen=True, slots=True)
class DirectiveReader:
    """How one scheduler's script options are shown: its command, prefix and option dash."""

    command: str
    prefix: str
    dash: str
    is_queue: bool

    def read(self, script: str) -> ScriptDirectives:
        """The script's directives as this scheduler reads them (PBS's ``-l`` resources shown
        as ``-l name=value``)."""
        if self.command == "qsub":
            read = read_pbs_directives(script)
            shown = tuple(_pbs_shown(d) for d in read.directives)
            return ScriptDirectives(shown, read.errors, read.ignored, read.values)
        if self.command == "bsub":
            return as_directives(read_bsub_directives(script))
        return read_directives(script)


def _pbs_shown(directive: Directive) -> Directive:
    kind, colon, resource = directive.option.partition(":")
    if not colon:
        return directive
    return Directive(kind, f"{resource}={directive.value}", directive.line)


READERS = {
    "slurm": DirectiveReader("sbatch", "#SBATCH", "--", is_queue=False),
    "pbs": DirectiveReader("qsub", "#PBS", "-", is_queue=True),
    "lsf": DirectiveReader("bsub", "#BSUB", "-", is_queue=True),
}


def reader_for(scheduler: str) -> DirectiveReader:
    """The reader of the cluster's scheduler; Slurm's for any other name."""
    return READERS.get(scheduler, READERS["slurm"])
