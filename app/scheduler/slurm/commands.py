"""Pure argv builders for the Slurm command-line tools.

Every builder returns a list of strings for ``shlex.join``; nothing here touches a shell,
the network or the clock. Query commands run under ``TZ=UTC`` so timestamps parse
without knowing the cluster's local zone.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime

from app.scheduler.errors import InvalidSpec
from app.scheduler.types import JobSpec

SEP = "\x1f"
"""Field separator for squeue/sacct/sinfo output. A job's name or path may hold it too:
the separators next to such fields carry a mark (marks.py)."""

_JOB_ID = re.compile(r"\d{1,12}(_\d{1,7})?")
_USER = re.compile(r"[a-z_][a-z0-9_.-]{0,31}")
_UTC = ["env", "TZ=UTC"]

# (key, squeue --Format field). Kept narrow: the JSON form is ~18x slower and in
# 22.05 ignores filters. Each field's suffix separates it from the next (squeue_format);
# ":0" asks for no minimum width, so nothing is padded or truncated.
SQUEUE_FIELDS: tuple[tuple[str, str], ...] = (
    ("job_id", "JobArrayID"),
    ("raw_job_id", "JobID"),
    ("state", "State"),
    ("reason", "Reason"),
    ("exit_status", "exit_code"),
    ("name", "Name"),
    ("user", "UserName"),
    ("account", "Account"),
    ("partition", "Partition"),
    ("qos", "QOS"),
    ("submit_time", "SubmitTime"),
    ("start_time", "StartTime"),
    ("end_time", "EndTime"),
    ("time_limit", "TimeLimit"),
    ("time_used", "TimeUsed"),
    ("tres_alloc", "tres-alloc"),
    ("nodes", "NodeList"),
    ("work_dir", "WorkDir"),
    ("stdout", "STDOUT"),
    ("stderr", "STDERR"),
    ("comment", "Comment"),
)

SACCT_FIELDS: tuple[str, ...] = (
    "JobID",
    "JobIDRaw",
    "JobName",
    "State",
    "ExitCode",
    "Reason",
    "Submit",
    "Start",
    "End",
    "ElapsedRaw",
    "TotalCPU",
    "MaxRSS",
    "AllocTRES",
    "ReqMem",
    "Timelimit",
    "Account",
    "User",
    "Partition",
    "NodeList",
    "WorkDir",
    "Comment",
    "QOS",
    # A pending job's priority is 0 while it is held; Slurm 23.02 and later no longer keep
    # JobHeldUser as its accounting Reason, so the hold is read from here.
    "Priority",
)

SINFO_FIELDS: tuple[tuple[str, str], ...] = (
    ("partition", "%P"),
    ("avail", "%a"),
    ("max_time", "%l"),
    ("default_time", "%L"),
    ("nodes", "%F"),
    ("cpus", "%C"),
)


def check_job_ids(job_ids: Iterable[str]) -> list[str]:
    """Return the ids as a list, refusing anything but ``123`` or ``123_4``."""
    ids = [str(job_id) for job_id in job_ids]
    for job_id in ids:
        if not _JOB_ID.fullmatch(job_id):
            raise InvalidSpec("job_id", f"not a job id: {job_id[:40]!r}")
    return ids


def check_user(user: str) -> str:
    """Return ``user`` if it is a plausible POSIX user name, else raise InvalidSpec."""
    if not _USER.fullmatch(user):
        raise InvalidSpec("user", "not a valid user name")
    return user


def format_minutes(minutes: int) -> str:
    """Render minutes in Slurm's ``D-HH:MM:SS`` form."""
    days, rest = divmod(minutes, 24 * 60)
    hours, mins = divmod(rest, 60)
    return f"{days}-{hours:02d}:{mins:02d}:00"


def _resource_options(spec: JobSpec) -> list[str]:
    options: list[str] = []
    if spec.time_limit_minutes is not None:
        options.append(f"--time={format_minutes(spec.time_limit_minutes)}")
    for flag, value in (
        ("--cpus-per-task", spec.cpus_per_task),
        ("--ntasks", spec.ntasks),
        ("--nodes", spec.nodes),
    ):
        if value is not None:
            options.append(f"{flag}={value}")
    if spec.memory_mb is not None:
        options.append(f"--mem={spec.memory_mb}M")
    if spec.mem_per_cpu_mb is not None:
        options.append(f"--mem-per-cpu={spec.mem_per_cpu_mb}M")
    if spec.gres:
        parts = [":".join(p for p in (g.name, g.type, str(g.count)) if p) for g in spec.gres]
        options.append("--gres=" + ",".join(parts))
    return options


def _named_options(spec: JobSpec) -> list[str]:
    pairs = (
        ("--job-name", spec.name),
        ("--account", spec.account),
        ("--partition", spec.partition),
        ("--qos", spec.qos),
        ("--array", spec.array),
        ("--chdir", spec.working_dir),
        ("--output", spec.stdout),
        ("--error", spec.stderr),
        ("--dependency", spec.dependency),
        ("--comment", spec.comment),
        ("--begin", spec.begin),
    )
    return [f"{flag}={value}" for flag, value in pairs if value is not None]


# sbatch reads a script from stdin only without arguments: with arguments the script goes to a
# private temporary file first (sbatch sends its content to slurmctld, so the file is removed
# at once). A constant snippet; options, then the arguments, arrive as positional parameters.
_SBATCH_WITH_ARGS = (
    'n=$1; shift; f=$(mktemp) || exit 97; cat > "$f" || { rm -f "$f"; exit 97; }; '
    'sbatch "${@:1:n}" "$f" "${@:n+1}"; rc=$?; rm -f "$f"; exit $rc'
)


def sbatch_argv(spec: JobSpec, *, test_only: bool = False) -> list[str]:
    """argv for ``sbatch --parsable``; the script itself is sent on stdin.

    Variables from ``spec.environment`` are set with ``env`` in front of sbatch, so
    their values never pass through sbatch's comma-separated ``--export`` syntax.
    """
    argv: list[str] = []
    if spec.environment:
        argv += ["env", *(f"{key}={value}" for key, value in spec.environment.items())]
    options = ["--parsable"]
    if test_only:
        options.append("--test-only")
    options += _named_options(spec) + _resource_options(spec)
    options.append("--export=ALL" if spec.export_env or spec.environment else "--export=NONE")
    if spec.hold:
        options.append("--hold")
    if not spec.args:
        return [*argv, "sbatch", *options]
    snippet = ["bash", "-c", _SBATCH_WITH_ARGS, "sbatch-with-args", str(len(options))]
    return [*argv, *snippet, *options, *spec.args]


# Fields whose value a user chooses: the separators next to them are marked (marks.py).
SQUEUE_FREE = frozenset({"name", "work_dir", "stdout", "stderr", "comment"})
_WITH_FORMAT = 'IFS= read -r SQUEUE_FORMAT2 && export SQUEUE_FORMAT2 && exec "$@"'


def squeue_argv(user: str | None = None, *, expand_arrays: bool = False) -> list[str]:
    """argv for one squeue call listing every job (or one user's) in the narrow format.

    The format (``squeue_format``) comes on stdin, read into ``SQUEUE_FORMAT2``: other
    users of the login node see a process's argv, never its environment, so its marks
    stay unknown to them. A pending array is one record (``12_[4-9]``) unless
    ``expand_arrays`` lists each task.
    """
    argv = ["sh", "-c", _WITH_FORMAT, "squeue", *_UTC, "squeue", "--noheader", "--all"]
    argv.append("--states=all")
    if expand_arrays:
        argv.append("--array")
    if user is not None:
        argv.append(f"--user={check_user(user)}")
    return argv


def squeue_format(field_mark: str, end_mark: str) -> str:
    """``SQUEUE_FORMAT2`` for squeue_argv: SEP after each field, ``field_mark`` instead
    where free text is on either side, and ``end_mark`` after the last field."""
    specs = []
    for index, (key, name) in enumerate(SQUEUE_FIELDS):
        following = SQUEUE_FIELDS[index + 1][0] if index + 1 < len(SQUEUE_FIELDS) else None
        if following is None:
            suffix = end_mark
        elif key in SQUEUE_FREE or following in SQUEUE_FREE:
            suffix = field_mark
        else:
            suffix = SEP
        specs.append(f"{name}:0{suffix}")
    return ",".join(specs)


def sacct_argv(
    job_ids: Sequence[str] | None = None,
    since: datetime | None = None,
    *,
    until: datetime | None = None,
    delimiter: str = SEP,
) -> list[str]:
    """argv for one sacct call with step rows (for MaxRSS) in the explicit field table,
    ``delimiter`` after every field (the last included: ``--parsable``)."""
    argv = [
        *_UTC,
        "sacct",
        "--noheader",
        "--parsable",
        f"--delimiter={delimiter}",
        "--allusers",
        f"--format={','.join(SACCT_FIELDS)}",
    ]
    if job_ids:
        argv.append("--jobs=" + ",".join(check_job_ids(job_ids)))
    if since is not None:
        argv.append("--starttime=" + _utc_text(since))
        argv.append("--endtime=" + (_utc_text(until) if until is not None else "now"))
    return argv


def _utc_text(moment: datetime) -> str:
    if moment.tzinfo is not None:
        moment = moment.astimezone(UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S")


def scancel_argv(job_ids: Sequence[str]) -> list[str]:
    """argv cancelling the given jobs.

    ``--verbose``: without it scancel says nothing and exits 0 for an id slurmctld does not
    know; with it the refusal ("Invalid job id specified") reaches stderr.
    """
    return ["scancel", "--verbose", *check_job_ids(job_ids)]


def hold_argv(job_ids: Sequence[str]) -> list[str]:
    """argv holding the given pending jobs."""
    return ["scontrol", "hold", ",".join(check_job_ids(job_ids))]


def release_argv(job_ids: Sequence[str]) -> list[str]:
    """argv releasing the given held jobs."""
    return ["scontrol", "release", ",".join(check_job_ids(job_ids))]


def batch_script_argv(job_id: str) -> list[str]:
    """argv printing the batch script slurmctld keeps for a job (``-`` is stdout)."""
    [checked] = check_job_ids([job_id])
    return ["scontrol", "write", "batch_script", checked.partition("_")[0], "-"]


def sinfo_argv() -> list[str]:
    """argv for one summary line per partition."""
    fmt = SEP.join(code for _, code in SINFO_FIELDS)
    return [*_UTC, "sinfo", "--noheader", f"--format={fmt}"]


def gres_argv() -> list[str]:
    """argv for one ``partition<SEP>gres`` line per partition and node group."""
    return [*_UTC, "sinfo", "--noheader", f"--format=%R{SEP}%G"]


def associations_argv(user: str) -> list[str]:
    """argv listing the user's associations as ``account|partition|qos`` lines."""
    return [
        "sacctmgr",
        "--noheader",
        "--parsable2",
        "show",
        "associations",
        "where",
        f"user={check_user(user)}",
        "format=Account,Partition,QOS",
    ]


def realpath_argv(path: str) -> list[str]:
    """argv resolving symlinks; fails if the file does not exist."""
    return ["realpath", "-e", "--", path]


# A constant script: the path and numbers arrive as positional parameters, so they are
# data to the shell, never code. The first output line is the size, the rest the bytes.
_READ_SCRIPT = (
    'stat -L -c %s -- "$1" || exit 2; '
    'exec dd if="$1" bs=65536 skip="$2" count="$3" iflag=skip_bytes,count_bytes status=none'
)


def read_chunk_argv(path: str, offset: int, limit: int) -> list[str]:
    """argv printing the file size on one line followed by ``limit`` bytes from ``offset``."""
    if offset < 0 or limit < 0:
        raise InvalidSpec("offset", "must not be negative")
    return ["sh", "-c", _READ_SCRIPT, "sh", path, str(offset), str(limit)]


# The exit status of make_folders_then's program when a folder could not be made; sbatch,
# env and true never exit with it (sbatch: 0 or 1; env: 125-127).
FOLDERS_REFUSED = 97

# A constant script: the first parameter counts the folders that follow it (a count, not a
# separator, so no folder name can end the list early); the rest is the command, run only
# once every folder exists and is writable, with stdin still unread for it.
_MKDIR_THEN_RUN_SCRIPT = (
    'n=$1; shift; bad=0; while [ "$n" -gt 0 ]; do '
    'mkdir -p -- "$1" 2>/dev/null && test -w "$1" || { printf "%s\\n" "$1"; bad=1; }; '
    f'shift; n=$((n - 1)); done; [ "$bad" = 0 ] || exit {FOLDERS_REFUSED}; exec "$@"'
)


def make_folders_then(directories: Sequence[str], command: Sequence[str]) -> list[str]:
    """argv making ``directories`` as the user, then running ``command``.

    Prints each folder that is missing or not writable and exits FOLDERS_REFUSED without
    running ``command``.
    """
    if not directories:
        return list(command)
    program = ["sh", "-c", _MKDIR_THEN_RUN_SCRIPT, "sh", str(len(directories))]
    return [*program, *directories, *command]


def ensure_dirs_argv(directories: Sequence[str]) -> list[str]:
    """argv creating directories; prints each one that is missing or not writable."""
    return make_folders_then(directories, ["true"])


def submit_argv(spec: JobSpec, directories: Sequence[str]) -> list[str]:
    """argv making ``directories`` as the user, then submitting: one round trip, not two.

    The program becomes ``sbatch_argv(spec)``, reading the script on stdin.
    """
    return make_folders_then(directories, sbatch_argv(spec))


def disk_usage_argv(command: Sequence[str], user: str) -> list[str]:
    """The site's disk usage command with ``{user}`` replaced by the cluster username
    (``["lfs", "quota", "-u", "{user}", "/lustre"]``); each argument stays one argument.

    LC_ALL=C: in the user's own locale quota words its headings in that language and
    ``lfs quota -h`` may write 4,012G, which the parsers would not read.
    """
    checked = check_user(user)
    return ["env", "LC_ALL=C", *(argument.replace("{user}", checked) for argument in command)]


# One scontrol process answers both requests: the nodes view costs one call (ADR 0025).
NODES_REQUESTS = "show partition\nshow node\n"


def nodes_argv() -> list[str]:
    """argv for every partition, then every node, one record a line; requests on stdin."""
    return [*_UTC, "scontrol", "--oneliner"]
