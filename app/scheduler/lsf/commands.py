"""Pure argv builders for LSF's commands (bsub, bjobs, bhist, bkill, bstop, bresume, bqueues).

Written against OpenLava 2.2, whose commands LSF's still accept: no ``bjobs -o`` (the long
``-l`` form is the one that carries exit codes and paths), no ``bsub -cwd`` (the job runs where
bsub ran, so bsub runs in the working directory), no job description (the portal's UUID rides
in the job name after :data:`COMMENT_MARK`). Queries run under ``TZ=UTC``: LSF prints local
times without a zone or a year.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime

from app.scheduler.errors import InvalidSpec
from app.scheduler.lsf.directives import read_bsub_directives
from app.scheduler.slurm.commands import check_user, make_folders_then
from app.scheduler.types import JobSpec

COMMENT_MARK = "#portal:"
"""Between a job's name and the portal's UUID in the LSF job name (``train#portal:3f2a…``)."""

DEFAULT_NAME = JobSpec.__dataclass_fields__["name"].default
_UTC = ["env", "TZ=UTC"]
_JOB_ID = re.compile(r"\d{1,12}(\[\d{1,7}\])?")
_COMMENT = re.compile(r"[A-Za-z0-9._-]{1,64}")
_NAME = re.compile(r"[^\s\[\]#]{1,128}")
_ARRAY = re.compile(r"[0-9][0-9,:%-]*")
# Slurm's filename patterns the portal writes, as LSF's: %J is the job (an array's) id, %I the
# array index. %x and %u are known before submission and written out.
_PATTERNS = {"j": "%J", "A": "%J", "a": "%I", "%": "%%"}
_DEPENDENCY = {"afterok": "done", "afterany": "ended", "afternotok": "exit", "after": "started"}


def check_job_id(job_id: str) -> str:
    """``123`` or ``123[4]``; anything else raises InvalidSpec."""
    if not _JOB_ID.fullmatch(job_id):
        raise InvalidSpec("job_id", f"not an LSF job id: {job_id!r}")
    return job_id


def bsub_argv(spec: JobSpec, user: str) -> list[str]:
    """argv submitting ``spec.script`` (sent on stdin, as ``bsub < script``) as ``user``.

    Runs in the working directory and with the job's environment set, as bsub copies both.
    """
    if spec.args:
        raise InvalidSpec("args", "LSF passes no arguments to a script read from its input")
    for field, value in (("qos", spec.qos), ("gres", spec.gres)):
        if value:
            raise InvalidSpec(field, f"this LSF cluster has no {field.upper()}")
    prefix = ["env"]
    if spec.working_dir is not None:
        prefix += ["-C", spec.working_dir]
    for key, value in spec.environment.items():
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", key):
            raise InvalidSpec("environment", f"not a variable name: {key!r}")
        prefix.append(f"{key}={value}")
    return [*prefix, "bsub", *_options(spec, check_user(user))]


def _options(spec: JobSpec, user: str) -> list[str]:
    # The script's own #BSUB -J and -o stand unless the spec says otherwise: options on
    # bsub's command line would override them.
    own = read_bsub_directives(spec.script).values
    if spec.name == DEFAULT_NAME and (named := own.get("J")) is not None and named.value:
        spec = replace(spec, name=named.value.split("[", 1)[0])
    argv = ["-J", job_name(spec)]
    if spec.partition:
        argv += ["-q", spec.partition]
    if spec.account:
        argv += ["-P", spec.account]
    if (minutes := spec.time_limit_minutes) is not None:
        argv += ["-W", str(minutes)]
    cores = (spec.ntasks or 1) * (spec.cpus_per_task or 1)
    if cores > 1:
        argv += ["-n", str(cores)]
    if spec.nodes == 1 and cores > 1:
        argv += ["-R", "span[hosts=1]"]
    elif spec.nodes is not None and spec.nodes > 1:
        argv += ["-R", f"span[ptile={-(-cores // spec.nodes)}]"]
    if (memory := _memory_mb(spec, cores)) is not None:
        argv += ["-M", str(memory * 1024)]  # OpenLava's unit is the kilobyte
    # -N: LSF's job report goes by mail, so the output file holds the job's output alone (as
    # on Slurm) rather than the report's header and resource summary around it.
    argv.append("-N")
    if spec.stdout is not None or "o" not in own:
        stdout = spec.stdout or ("lsf-%j_%a.out" if spec.array else "lsf-%j.out")
        argv += ["-o", output_path(stdout, spec.name, user)]
    if spec.stderr:
        argv += ["-e", output_path(spec.stderr, spec.name, user)]
    if spec.dependency:
        argv += ["-w", dependency(spec.dependency)]
    if spec.begin:
        argv += ["-b", begin_time(spec.begin)]
    if spec.hold:
        argv.append("-H")
    return argv


def _memory_mb(spec: JobSpec, cores: int) -> int | None:
    if spec.memory_mb is not None:
        return spec.memory_mb
    if spec.mem_per_cpu_mb is not None:
        return spec.mem_per_cpu_mb * cores
    return None


def job_name(spec: JobSpec) -> str:
    """``name``, the portal's UUID after COMMENT_MARK, and an array's ``[1-10]``."""
    if not _NAME.fullmatch(spec.name):
        raise InvalidSpec("name", "an LSF job name has no blanks, brackets or #")
    name = spec.name
    if spec.comment:
        if not _COMMENT.fullmatch(spec.comment):
            raise InvalidSpec("comment", "letters, digits, '.', '_' and '-' only")
        name += COMMENT_MARK + spec.comment
    if spec.array:
        if not _ARRAY.fullmatch(spec.array):
            raise InvalidSpec("array", f"not an array range: {spec.array!r}")
        # LSF's grammar matches Slurm's here: 1-10, 1,3,5, 1-10:2, and %N running at once.
        indices, _, limit = spec.array.partition("%")
        name += f"[{indices}]" + (f"%{limit}" if limit else "")
    return name


def output_path(path: str, name: str, user: str) -> str:
    """A Slurm-style output path (``%j``, ``%A_%a``, ``%x``, ``%u``) in LSF's terms."""

    def swap(match: re.Match[str]) -> str:
        letter = match[1]
        if letter in _PATTERNS:
            return _PATTERNS[letter]
        if letter == "x":
            return name
        if letter == "u":
            return user
        raise InvalidSpec("stdout", f"LSF has no %{letter} in file names (it has %J and %I)")

    return re.sub(r"%(.)", swap, path)


def dependency(text: str) -> str:
    """Slurm's ``afterok:1:2`` as LSF's ``done(1) && done(2)``."""
    conditions = []
    for part in text.split(","):
        kind, _, ids = part.partition(":")
        if kind not in _DEPENDENCY or not ids:
            raise InvalidSpec("dependency", f"LSF has no dependency like {part!r}")
        conditions += [f"{_DEPENDENCY[kind]}({check_job_id(i)})" for i in ids.split(":")]
    return " && ".join(conditions)


def begin_time(text: str) -> str:
    """An ISO date and time as bsub -b's ``month:day:hour:minute`` (within the next year)."""
    try:
        when = datetime.fromisoformat(text)
    except ValueError:
        raise InvalidSpec(
            "begin", "give the start as a date and time, e.g. 2026-12-01T08:00"
        ) from None
    return when.strftime("%m:%d:%H:%M")


def submit_argv(spec: JobSpec, user: str, directories: Sequence[str]) -> list[str]:
    """argv making ``directories`` as the user, then submitting: one round trip."""
    return make_folders_then(directories, bsub_argv(spec, user))


LISTING_BREAK = "\x1e\n"
"""Between bjobs_argv's two listings: a job's name holds no line feed."""
# The wide listing, whose first four columns LSF writes itself (id, user, status, queue),
# then the long form, whose free text (a job's name, its folder) can pass for fields or
# whole records (bjobs.py). One process, one round trip.
_BJOBS_SCRIPT = 'bjobs -w -a -u all; printf "\\036\\n"; exec bjobs -l -a -u all'


def bjobs_argv() -> list[str]:
    """Every user's jobs, unfinished and recently finished (``-a``): the wide listing,
    ``LISTING_BREAK``, then the long form."""
    return [*_UTC, "sh", "-c", _BJOBS_SCRIPT]


# The same for histories; the job ids, checked, are the snippet's arguments.
_BHIST_SCRIPT = 'bhist -w -a -u all "$@"; printf "\\036\\n"; exec bhist -l -a -u all "$@"'


def bhist_argv(job_ids: Sequence[str] = ()) -> list[str]:
    """Every user's job histories (``-a``: finished ones too), or those of ``job_ids``: the
    wide listing, ``LISTING_BREAK``, then the long form."""
    return [*_UTC, "sh", "-c", _BHIST_SCRIPT, "bhist", *(check_job_id(j) for j in job_ids)]


def bkill_argv(job_ids: Sequence[str]) -> list[str]:
    """argv killing jobs (an array's id kills every task)."""
    return ["bkill", *(check_job_id(j) for j in job_ids)]


def bstop_argv(job_ids: Sequence[str]) -> list[str]:
    """argv suspending jobs: a pending one stays pending (PSUSP) until resumed."""
    return ["bstop", *(check_job_id(j) for j in job_ids)]


def bresume_argv(job_ids: Sequence[str]) -> list[str]:
    """argv resuming suspended jobs."""
    return ["bresume", *(check_job_id(j) for j in job_ids)]


def bqueues_argv() -> list[str]:
    """Every queue with its limits, in the long form."""
    return ["bqueues", "-l"]


def bhosts_argv() -> list[str]:
    """Every host with its slots (one line each)."""
    return ["bhosts", "-w"]
