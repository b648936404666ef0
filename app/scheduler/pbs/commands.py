"""Pure argv builders for the PBS (OpenPBS, PBS Professional) command-line tools.

Every builder returns a list of strings for ``shlex.join``; nothing here touches a shell, the
network or the clock. Queries ask for PBS's JSON (``-F json``), which names every attribute.

A ``JobSpec`` speaks Slurm's words (``%j`` in log paths, ``1-10%2`` arrays); this module turns
them into qsub's, and refuses with InvalidSpec what PBS cannot do (a QOS, script arguments).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from app.scheduler.errors import InvalidSpec
from app.scheduler.slurm.commands import check_user, make_folders_then
from app.scheduler.types import JobSpec

# 123.pbshead, 123[].pbshead (an array), 123[4].pbshead (one of its tasks); the server's name
# may be left out, as qstat and qdel accept.
_JOB_ID = re.compile(r"\d{1,12}(\[\d{0,7}\])?(\.[A-Za-z0-9][A-Za-z0-9.-]{0,252})?")
_ARRAY = re.compile(r"(\d{1,7})-(\d{1,7})(:\d{1,7})?(%\d{1,7})?")
_DEPENDENCY = re.compile(r"(afterok|afterany|afternotok|after):([\d:\[\]._A-Za-z-]+)")
_ISO_BEGIN = re.compile(r"(\d{4})-(\d\d)-(\d\d)(?:T(\d\d):(\d\d)(?::(\d\d))?)?")

# Times in qstat's output are the server's local ctime strings: read in UTC, they need no zone.
_UTC = ["env", "TZ=UTC"]

COMMENT_VARIABLE = "PORTAL_COMMENT"
"""PBS has no comment a user may set (the server writes its own): the portal's submission
UUID travels as this job variable, which qstat shows in ``Variable_List``."""


def check_job_ids(job_ids: Iterable[str]) -> list[str]:
    """Return the ids as a list, refusing anything but PBS job, array or task ids."""
    ids = [str(job_id) for job_id in job_ids]
    for job_id in ids:
        if not _JOB_ID.fullmatch(job_id):
            raise InvalidSpec("job_id", f"not a PBS job id: {job_id[:40]!r}")
    return ids


def format_walltime(minutes: int) -> str:
    """Minutes as PBS's ``HH:MM:SS`` (hours may exceed 24)."""
    hours, mins = divmod(minutes, 60)
    return f"{hours:02d}:{mins:02d}:00"


def select_statement(spec: JobSpec) -> str | None:
    """The ``select=`` chunk for the spec's CPUs, memory and GPUs (one chunk per node)."""
    nodes = spec.nodes or 1
    cpus = (spec.ntasks or 1) * (spec.cpus_per_task or 1)
    per_node = -(-cpus // nodes)
    parts = [f"select={nodes}", f"ncpus={per_node}"]
    if spec.memory_mb is not None:
        parts.append(f"mem={spec.memory_mb}mb")
    elif spec.mem_per_cpu_mb is not None:
        parts.append(f"mem={spec.mem_per_cpu_mb * per_node}mb")
    gpus = sum(g.count for g in spec.gres if g.name == "gpu")
    if gpus:
        parts.append(f"ngpus={-(-gpus // nodes)}")
    plain = spec.nodes is None and cpus == 1 and len(parts) == 2
    return None if plain else ":".join(parts)


def array_range(array: str) -> str:
    """Slurm's ``1-10``, ``1-10:2`` or ``1-10%2`` as qsub's ``-J`` (lists have no PBS form)."""
    match = _ARRAY.fullmatch(array)
    if match is None:
        raise InvalidSpec("array", "PBS arrays are a range such as 1-10, 1-10:2 or 1-10%2")
    if int(match[1]) >= int(match[2]):
        raise InvalidSpec("array", "a PBS array needs at least two tasks (e.g. 1-2)")
    return array


def depend_value(dependency: str) -> str:
    """Slurm's ``afterok:12:13`` as PBS's ``depend=afterok:12:13`` (same words, ``,`` lists)."""
    units = dependency.split(",")
    if not all(_DEPENDENCY.fullmatch(unit) for unit in units):
        raise InvalidSpec("dependency", "PBS understands after, afterok, afternotok, afterany")
    return "depend=" + ",".join(units)


def begin_value(begin: str) -> str:
    """An ISO date (and time) as qsub ``-a``'s ``[[CC]YY]MMDDhhmm[.SS]``."""
    match = _ISO_BEGIN.fullmatch(begin)
    if match is None:
        raise InvalidSpec("begin", "PBS takes a start time as YYYY-MM-DDTHH:MM[:SS]")
    year, month, day, hour, minute, second = match.groups()
    return f"{year}{month}{day}{hour or '00'}{minute or '00'}.{second or '00'}"


def output_path(path: str, name: str, user: str) -> str:
    """A log path in Slurm's patterns as PBS takes it: %x and %u filled in, %a as PBS's
    ``^array_index^``. %j and %A stay: the submission fills them in once the id is known."""
    table = {"x": name, "u": user, "a": "^array_index^", "%": "%"}
    return re.sub(r"%([xua%])", lambda m: table[m[1]], path)


def _unsupported(spec: JobSpec) -> None:
    if spec.qos is not None:
        raise InvalidSpec("qos", "PBS has no QOS: choose a queue instead")
    if spec.args:
        raise InvalidSpec("args", "PBS passes no arguments to a batch script")


def qsub_options(spec: JobSpec, user: str) -> list[str]:
    """qsub's options for ``spec`` (the script itself goes on stdin)."""
    _unsupported(spec)
    options = ["-N", spec.name]
    for flag, value in (("-A", spec.account), ("-q", spec.partition)):
        if value is not None:
            options += [flag, value]
    if spec.time_limit_minutes is not None:
        options += ["-l", f"walltime={format_walltime(spec.time_limit_minutes)}"]
    if (select := select_statement(spec)) is not None:
        options += ["-l", select]
    if spec.array is not None:
        options += ["-J", array_range(spec.array)]
    if spec.stdout is not None:
        options += ["-o", output_path(spec.stdout, spec.name, user)]
    if spec.stderr is not None:
        options += ["-e", output_path(spec.stderr, spec.name, user)]
    else:
        options += ["-j", "oe"]  # as sbatch: errors go with the output unless named apart
    if spec.dependency is not None:
        options += ["-W", depend_value(spec.dependency)]
    if spec.begin is not None:
        options += ["-a", begin_value(spec.begin)]
    if spec.export_env:
        options.append("-V")
    names = [*spec.environment, *([COMMENT_VARIABLE] if spec.comment is not None else [])]
    if names:
        # Names only: qsub takes the values from its own environment (``env`` sets them), so
        # no value passes through -v's comma-separated syntax.
        options += ["-v", ",".join(names)]
    return options


# The job id is known only once qsub answers, so a log path naming it (%j, %A) is set by qalter
# on the held job, which is released unless the spec asked for a hold. A constant snippet: the
# hold flag, the paths, the count of qsub's options, then those options arrive as parameters.
_QSUB_THEN_PATHS = (
    'hold=$1; out=$2; err=$3; shift 3; id=$(qsub -f -h "$@") || exit $?; n=${id%%.*}; '
    "n=${n%%\\[*}; set --; "
    '[ -z "$out" ] || set -- "$@" -o "$(printf %s "$out" | sed "s/%[jA]/$n/g")"; '
    '[ -z "$err" ] || set -- "$@" -e "$(printf %s "$err" | sed "s/%[jA]/$n/g")"; '
    'qalter "$@" "$id" >/dev/null || { qdel "$id"; exit 1; }; '
    '[ "$hold" = 1 ] || qrls -h u "$id" >/dev/null || exit 1; printf "%s\\n" "$id"'
)


def qsub_argv(spec: JobSpec, user: str) -> list[str]:
    """argv for ``qsub -f`` (no background daemon left behind) reading the script on stdin."""
    env: list[str] = []
    variables = dict(spec.environment)
    if spec.comment is not None:
        variables[COMMENT_VARIABLE] = spec.comment
    if variables:
        env = ["env", *(f"{key}={value}" for key, value in variables.items())]
    options = qsub_options(spec, check_user(user))
    late = [p for p in (spec.stdout, spec.stderr) if p is not None and re.search("%[jA]", p)]
    if not late:
        hold = ["-h"] if spec.hold else []
        return [*env, "qsub", "-f", *hold, *options]
    out = output_path(spec.stdout or "", spec.name, user)
    err = output_path(spec.stderr or "", spec.name, user)
    held = "1" if spec.hold else "0"
    return [*env, "sh", "-c", _QSUB_THEN_PATHS, "qsub", held, out, err, *options]


# PBS starts a job in the user's home; qsub records the folder it ran in as PBS_O_WORKDIR (and
# writes default log files there), so it runs in the working folder.
_IN_FOLDER = 'cd -- "$1" || exit 1; shift; exec "$@"'


def submit_argv(spec: JobSpec, user: str, directories: Sequence[str]) -> list[str]:
    """argv making ``directories`` as the user, then submitting from the working folder:
    one round trip."""
    argv = qsub_argv(spec, user)
    if spec.working_dir is not None:
        argv = ["sh", "-c", _IN_FOLDER, "cd", spec.working_dir, *argv]
    return make_folders_then(directories, argv)


def qdel_argv(job_ids: Sequence[str]) -> list[str]:
    """argv deleting the given jobs (never ``-x``, which would purge them from the history
    the portal reads their end from)."""
    return ["qdel", *check_job_ids(job_ids)]


def qhold_argv(job_ids: Sequence[str]) -> list[str]:
    """argv placing a user hold on the given jobs."""
    return ["qhold", "-h", "u", *check_job_ids(job_ids)]


def qrls_argv(job_ids: Sequence[str]) -> list[str]:
    """argv releasing the user hold of the given jobs."""
    return ["qrls", "-h", "u", *check_job_ids(job_ids)]


def qstat_argv(job_ids: Sequence[str] | None = None, *, history: bool = False) -> list[str]:
    """argv for one ``qstat -f -F json`` listing every job and array task (``-t``); with
    ``history`` finished jobs too (``-x``, kept for the server's job_history_duration)."""
    argv = [*_UTC, "qstat", "-f", "-F", "json", "-t"]
    if history:
        argv.append("-x")
    if job_ids:
        argv += check_job_ids(job_ids)
    return argv


def server_argv() -> list[str]:
    """argv for the server's status (the health probe)."""
    return ["qstat", "-B", "-f", "-F", "json"]


RECORD_SEPARATOR = "\x1e"
"""Between the answers of ``status_argv``'s three commands; JSON never holds it raw."""

# A constant snippet: the server (its default queue), every queue, every node, in one process.
_STATUS_SCRIPT = (
    'qstat -B -f -F json || exit $?; printf "\\036\\n"; '
    'qstat -Q -f -F json || exit $?; printf "\\036\\n"; exec pbsnodes -a -F json'
)


def status_argv() -> list[str]:
    """argv printing the server, the queues and the nodes as JSON, RECORD_SEPARATOR between:
    queues, nodes and their access rules for one round trip."""
    return ["sh", "-c", _STATUS_SCRIPT]
