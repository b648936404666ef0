"""Validation of job specs and file paths before anything reaches the scheduler.

Options travel as separate argv elements (or JSON fields), never inside the script, so a
value can only do harm through characters the scheduler itself interprets. Each field is
therefore held to a strict charset and length.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable

from app.scheduler.directive_values import array_tasks
from app.scheduler.errors import InvalidSpec
from app.scheduler.types import JobSpec

MAX_SCRIPT_BYTES = 1024 * 1024
MAX_PATH = 4096
MAX_TIME_MINUTES = 366 * 24 * 60

_IDENT = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
_JOB_NAME = re.compile(r"[A-Za-z0-9_.+-][A-Za-z0-9_.+ -]{0,127}")
_ENV_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,255}")
_GRES_WORD = re.compile(r"[A-Za-z0-9_]{1,32}")
_COMMENT = re.compile(r"[A-Za-z0-9_.:,+=@/ -]{0,512}")
_BEGIN = re.compile(
    r"(now(\+\d{1,9}(seconds|minutes|hours|days)?)?|\d{4}-\d\d-\d\d(T\d\d:\d\d(:\d\d)?)?)"
)
_PATH_CHARS = re.compile(r"/[A-Za-z0-9_.+%@=,/ -]*")
_PATH_PATTERN = re.compile(r"%(.)")
_ALLOWED_PATTERNS = frozenset("AabjJNnstuUx%")

_DEP_ID = r"\d{1,12}(_\d{1,7})?(\+\d{1,9})?"
_DEP_TYPE = r"(after|afterany|afternotok|afterok|aftercorr|afterburstbuffer)"
_DEP_UNIT = rf"(singleton|{_DEP_TYPE}(:{_DEP_ID})+)"
_DEPENDENCY = re.compile(rf"{_DEP_UNIT}([,?]{_DEP_UNIT})*")


def _check_text(field: str, value: str) -> None:
    if "\x00" in value:
        raise InvalidSpec(field, "must not contain NUL characters")
    if "\n" in value or "\r" in value:
        raise InvalidSpec(field, "must be a single line")


def _check_match(field: str, value: str | None, pattern: re.Pattern[str], hint: str) -> None:
    if value is None:
        return
    _check_text(field, value)
    if not pattern.fullmatch(value):
        raise InvalidSpec(field, hint)


def _check_positive(field: str, value: int | None, upper: int) -> None:
    if value is None:
        return
    if isinstance(value, bool) or not 1 <= value <= upper:
        raise InvalidSpec(field, f"must be a whole number between 1 and {upper}")


def is_under_roots(path: str, roots: Iterable[str]) -> bool:
    """True when ``path`` (already normalised) equals or lies below one of ``roots``."""
    for root in roots:
        clean = root.rstrip("/") or "/"
        if path == clean or path.startswith(clean.rstrip("/") + "/"):
            return True
    return False


def resolve_log_path(path: str, roots: Iterable[str]) -> str:
    """Normalise an absolute path and make sure it stays under ``roots``.

    Refuses relative paths, ``..`` components and control characters. Symlinks that
    escape are caught on the cluster, where the file is resolved with ``realpath``.
    """
    field = "path"
    _check_text(field, path)
    if len(path) > MAX_PATH:
        raise InvalidSpec(field, "is too long")
    if not path.startswith("/"):
        raise InvalidSpec(field, "must be an absolute path")
    if ".." in path.split("/"):
        raise InvalidSpec(field, "must not contain '..'")
    normalised = posixpath.normpath(path)
    if normalised.startswith("//"):
        normalised = "/" + normalised.lstrip("/")
    if not is_under_roots(normalised, roots):
        raise InvalidSpec(field, "is outside the allowed directories")
    return normalised


def _check_path(field: str, value: str | None, roots: Iterable[str]) -> None:
    if value is None:
        return
    try:
        resolve_log_path(value, roots)
    except InvalidSpec as exc:
        raise InvalidSpec(field, exc.message) from None
    if not _PATH_CHARS.fullmatch(value):
        raise InvalidSpec(field, "contains characters that are not allowed in paths")
    for code in _PATH_PATTERN.findall(value):
        if code not in _ALLOWED_PATTERNS:
            raise InvalidSpec(field, f"unknown filename pattern %{code}")


def _check_script(script: str) -> None:
    if "\x00" in script:
        raise InvalidSpec("script", "must not contain NUL characters")
    if len(script.encode()) > MAX_SCRIPT_BYTES:
        raise InvalidSpec("script", "is larger than 1 MiB")
    if not script.startswith("#!"):
        raise InvalidSpec("script", "must start with an interpreter line such as #!/bin/bash")


def _check_environment(spec: JobSpec) -> None:
    for key, value in spec.environment.items():
        if not _ENV_KEY.fullmatch(key):
            raise InvalidSpec("environment", f"invalid variable name {key[:40]!r}")
        if "\x00" in value:
            raise InvalidSpec("environment", f"value of {key} contains a NUL character")
        if len(value) > 65536:
            raise InvalidSpec("environment", f"value of {key} is too long")


MAX_ARGS = 256
MAX_ARG_BYTES = 4096


def _check_args(spec: JobSpec) -> None:
    if len(spec.args) > MAX_ARGS:
        raise InvalidSpec("args", f"at most {MAX_ARGS} arguments")
    for arg in spec.args:
        if "\x00" in arg:
            raise InvalidSpec("args", "an argument contains a NUL character")
        if len(arg.encode()) > MAX_ARG_BYTES:
            raise InvalidSpec("args", f"an argument is longer than {MAX_ARG_BYTES} bytes")


def _check_array(array: str | None) -> None:
    if array is None:
        return
    _check_text("array", array)
    try:
        array_tasks(array)
    except ValueError as error:
        raise InvalidSpec("array", str(error)) from error


def _check_resources(spec: JobSpec) -> None:
    _check_positive("time_limit", spec.time_limit_minutes, MAX_TIME_MINUTES)
    _check_positive("cpus_per_task", spec.cpus_per_task, 4096)
    _check_positive("ntasks", spec.ntasks, 1_000_000)
    _check_positive("nodes", spec.nodes, 100_000)
    if spec.nodes and spec.ntasks and spec.nodes > spec.ntasks:
        # sbatch would only warn and quietly lower the node count.
        raise InvalidSpec(
            "nodes",
            f"{spec.nodes} nodes for {spec.ntasks} task{'s' if spec.ntasks > 1 else ''} "
            "leaves a node with nothing to run; "
            "ask for more tasks or fewer nodes",
        )
    _check_positive("memory_mb", spec.memory_mb, 64 * 1024 * 1024)
    _check_positive("mem_per_cpu_mb", spec.mem_per_cpu_mb, 64 * 1024 * 1024)
    if spec.memory_mb is not None and spec.mem_per_cpu_mb is not None:
        raise InvalidSpec("memory_mb", "set either memory per node or memory per CPU, not both")
    for gres in spec.gres:
        _check_match("gres", gres.name, _GRES_WORD, "invalid resource name")
        if gres.type:
            _check_match("gres", gres.type, _GRES_WORD, "invalid resource type")
        _check_positive("gres", gres.count, 1024)


def validate_spec(spec: JobSpec, roots: Iterable[str]) -> None:
    """Raise InvalidSpec for the first field of ``spec`` that is unsafe or malformed."""
    allowed = tuple(roots)
    _check_script(spec.script)
    _check_match("name", spec.name, _JOB_NAME, "use letters, digits, spaces and ._+- only")
    ident_hint = "use letters, digits and ._- only"
    _check_match("account", spec.account, _IDENT, ident_hint)
    _check_match("partition", spec.partition, _IDENT, ident_hint)
    _check_match("qos", spec.qos, _IDENT, ident_hint)
    _check_array(spec.array)
    _check_match("dependency", spec.dependency, _DEPENDENCY, "expected e.g. afterok:123")
    _check_match("comment", spec.comment, _COMMENT, "contains characters that are not allowed")
    _check_match("begin", spec.begin, _BEGIN, "expected now+N or an ISO date/time")
    _check_path("working_dir", spec.working_dir, allowed)
    _check_path("stdout", spec.stdout, allowed)
    _check_path("stderr", spec.stderr, allowed)
    _check_resources(spec)
    _check_environment(spec)
    _check_args(spec)
