"""Pure mapping between slurmrestd JSON and the library's types.

Job records of every API version are first upgraded to the newest shape
(``rest_versions``), then mapped once. ``/slurm/v0.0.38`` reports the raw wait status
(``code = s >> 8``, ``signal = s & 0x7f``); later versions an exit-code object.
``/slurmdb/v0.0.38`` reports ``SUCCESS/0`` for ordinary non-zero
exits in 22.05, so its exit code is only trusted for COMPLETED jobs and signals; otherwise
it is left unknown (None) and accounting goes through ``sacct`` instead (see ADR 0003).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

from app.scheduler.slurm.parsing import expand_output_path, parse_tres
from app.scheduler.slurm.rest_versions import number, number_value, upgrade_job
from app.scheduler.states import JobState, state_from_slurm
from app.scheduler.types import JobInfo, JobSpec, Tres

DEFAULT_PATH = "/usr/local/bin:/usr/bin:/bin"


def _epoch(value: Any) -> datetime | None:
    seconds = number_value(value)
    if seconds is None or seconds <= 0:
        return None
    return datetime.fromtimestamp(seconds, UTC)


def _text(value: Any) -> str | None:
    if value is None:
        return None
    text = str(value)
    return None if text in ("", "None") else text


def _ids(job: Mapping[str, Any]) -> tuple[str, str | None, str | None]:
    job_id = str(job["job_id"])
    array_job = number_value(job.get("array_job_id")) or 0
    task = number_value(job.get("array_task_id"))
    if not array_job:
        return job_id, None, None
    if task is None:
        pending = job.get("array_task_string") or ""
        return f"{array_job}_[{pending}]", str(array_job), f"[{pending}]"
    return f"{array_job}_{task}", str(array_job), str(task)


def _paths(
    job: Mapping[str, Any], array_job_id: str | None, array_task_id: str | None
) -> dict[str, str | None]:
    paths: dict[str, str | None] = {}
    for key, expanded in (
        ("standard_output", "stdout_expanded"),
        ("standard_error", "stderr_expanded"),
    ):
        # slurmrestd expands only what it knows; a leftover pattern is expanded here.
        pattern = _text(job.get(expanded)) or _text(job.get(key))
        paths[key] = expand_output_path(
            pattern,
            job_id=str(job["job_id"]),
            name=_text(job.get("name")),
            user=_text(job.get("user_name")),
            array_job_id=array_job_id,
            array_task_id=array_task_id,
            raw_job_id=str(job["job_id"]),
        )
    return paths


def _state(job: Mapping[str, Any], reason: str | None) -> tuple[JobState, str]:
    states = [str(s) for s in job.get("job_state") or []]
    native = ",".join(states)
    if "COMPLETING" in states[1:]:
        return JobState.COMPLETING, native
    return state_from_slurm(states[0] if states else "", reason), native


def exit_from_object(exit_obj: Any) -> tuple[int | None, int | None]:
    """(exit code, signal or None) from a v0.0.40+ exit-code object."""
    if not isinstance(exit_obj, Mapping):
        return None, None
    signal = number_value((exit_obj.get("signal") or {}).get("id"))
    code = number_value(exit_obj.get("return_code"))
    if "SIGNALED" in (exit_obj.get("status") or []) and signal:
        return code or 0, signal
    return code, None


def job_from_rest(raw: Mapping[str, Any], version: str) -> JobInfo:
    """Map one ``/slurm/<version>/jobs`` (or ``squeue --json``) record onto a JobInfo."""
    job = upgrade_job(raw, version)
    job_id, array_job_id, array_task_id = _ids(job)
    reason = _text(job.get("state_reason"))
    state, native_state = _state(job, reason)
    exit_code, signal = (
        exit_from_object(job.get("exit_code")) if state.is_terminal else (None, None)
    )
    start, end = _epoch(job.get("start_time")), _epoch(job.get("end_time"))
    limit = number_value(job.get("time_limit"))
    paths = _paths(job, array_job_id, array_task_id)
    return JobInfo(
        job_id=job_id,
        raw_job_id=str(job["job_id"]),
        array_job_id=array_job_id,
        array_task_id=array_task_id,
        state=state,
        native_state=native_state,
        reason=reason,
        exit_code=exit_code,
        signal=signal,
        submit_time=_epoch(job.get("submit_time")),
        start_time=start,
        end_time=end if state.is_terminal else None,
        time_limit=timedelta(minutes=limit) if limit else None,
        elapsed_seconds=_elapsed(state, start, end),
        alloc=parse_tres(_text(job.get("tres_alloc_str"))),
        nodes=_text(job.get("nodes")),
        user=_text(job.get("user_name")),
        account=_text(job.get("account")),
        partition=_text(job.get("partition")),
        name=_text(job.get("name")),
        comment=_text(job.get("comment")),
        work_dir=_text(job.get("current_working_directory")),
        stdout_path=paths["standard_output"],
        stderr_path=paths["standard_error"] or paths["standard_output"],
        native=dict(raw),
    )


def _elapsed(state: JobState, start: datetime | None, end: datetime | None) -> int | None:
    if start is None:
        return None
    stop = end if state.is_terminal and end is not None else datetime.now(UTC)
    return max(0, int((stop - start).total_seconds()))


def _db_exit(job: Mapping[str, Any], state: JobState) -> tuple[int | None, int | None]:
    exit_obj = job.get("exit_code") or {}
    signal = (exit_obj.get("signal") or {}).get("signal_id")
    if exit_obj.get("status") == "SIGNALED" and signal:
        return 0, int(signal)
    if state is JobState.COMPLETED:
        return 0, None
    return None, None


def _db_tres(job: Mapping[str, Any]) -> Tres:
    items = (job.get("tres") or {}).get("allocated") or []
    pairs = []
    for item in items:
        key = item.get("type", "")
        if item.get("name"):
            key = f"{key}/{item['name']}"
        suffix = "M" if key == "mem" else ""
        pairs.append(f"{key}={item.get('count', 0)}{suffix}")
    return parse_tres(",".join(pairs) or None)


def _db_step_cpu(job: Mapping[str, Any]) -> float | None:
    steps = job.get("steps") or []
    if not steps:
        return None
    total = 0.0
    for step in steps:
        spent = (step.get("time") or {}).get("total") or {}
        total += spent.get("seconds", 0) + spent.get("microseconds", 0) / 1e6
    return total


def job_from_dbv0038(job: Mapping[str, Any]) -> JobInfo:
    """Map one ``/slurmdb/v0.0.38/jobs`` (or ``sacct --json``) record onto a JobInfo."""
    state_obj = job.get("state") or {}
    reason = _text(state_obj.get("reason"))
    state = state_from_slurm(str(state_obj.get("current", "")), reason)
    times = job.get("time") or {}
    array = job.get("array") or {}
    array_job = array.get("job_id") or 0
    task = array.get("task_id")
    job_id = f"{array_job}_{task}" if array_job and task is not None else str(job["job_id"])
    exit_code, signal = _db_exit(job, state)
    limit = times.get("limit")
    return JobInfo(
        job_id=job_id,
        raw_job_id=str(job["job_id"]),
        array_job_id=str(array_job) if array_job else None,
        array_task_id=str(task) if array_job and task is not None else None,
        state=state,
        native_state=str(state_obj.get("current", "")),
        reason=reason,
        exit_code=exit_code,
        signal=signal,
        submit_time=_epoch(times.get("submission")),
        start_time=_epoch(times.get("start")),
        end_time=_epoch(times.get("end")),
        time_limit=timedelta(minutes=limit) if isinstance(limit, int) and limit > 0 else None,
        elapsed_seconds=times.get("elapsed"),
        total_cpu_seconds=_db_step_cpu(job),
        alloc=_db_tres(job),
        nodes=_text(job.get("nodes")),
        user=_text(job.get("user")),
        account=_text(job.get("account")),
        partition=_text(job.get("partition")),
        name=_text(job.get("name")),
        comment=_text((job.get("comment") or {}).get("job")),
        work_dir=_text(job.get("working_directory")),
        native=dict(job),
    )


def _gres_text(spec: JobSpec, prefix: str = "") -> str:
    return ",".join(
        prefix + ":".join(p for p in (g.name, g.type, str(g.count)) if p) for g in spec.gres
    )


def _common_fields(spec: JobSpec) -> dict[str, Any]:
    return {
        "account": spec.account,
        "partition": spec.partition,
        "qos": spec.qos,
        "cpus_per_task": spec.cpus_per_task,
        "tasks": spec.ntasks,
        "array": spec.array,
        "standard_output": spec.stdout,
        "standard_error": spec.stderr,
        "dependency": spec.dependency,
        "comment": spec.comment,
    }


def submit_payload_v0038(spec: JobSpec, default_cwd: str) -> dict[str, Any]:
    """The v0.0.38 ``job/submit`` body; environment is a dict and the cwd is always sent.

    Never with script arguments: 22.05's slurmrestd exits on a submission carrying ``argv``.
    """
    if spec.args:
        raise ValueError("v0.0.38 submissions cannot carry script arguments")
    job: dict[str, Any] = {
        "name": spec.name,
        "current_working_directory": spec.working_dir or default_cwd,
        "environment": dict(spec.environment) or {"PATH": DEFAULT_PATH},
    }
    optional: dict[str, Any] = {
        **_common_fields(spec),
        "time_limit": spec.time_limit_minutes,
        "nodes": spec.nodes,
        "memory_per_node": spec.memory_mb,
        "memory_per_cpu": spec.mem_per_cpu_mb,
        "begin_time": spec.begin,
    }
    job.update({key: value for key, value in optional.items() if value is not None})
    if spec.gres:
        job["gres"] = _gres_text(spec)
    if spec.hold:
        job["hold"] = True
    return {"script": spec.script, "job": job}


def submit_payload_v0040(spec: JobSpec, default_cwd: str, *, now: float) -> dict[str, Any]:
    """The v0.0.40+ ``job/submit`` body: the script inside ``job``, numbers as objects and
    the environment as ``K=V`` strings (a dict is dropped with only a warning)."""
    environment = dict(spec.environment) or {"PATH": DEFAULT_PATH}
    job: dict[str, Any] = {
        "script": spec.script,
        "name": spec.name,
        "current_working_directory": spec.working_dir or default_cwd,
        "environment": [f"{key}={value}" for key, value in environment.items()],
    }
    numbers: dict[str, int | None] = {
        "time_limit": spec.time_limit_minutes,
        "memory_per_node": spec.memory_mb,
        "memory_per_cpu": spec.mem_per_cpu_mb,
        "begin_time": _begin_epoch(spec.begin, now),
    }
    job.update({key: value for key, value in _common_fields(spec).items() if value is not None})
    job.update({key: number(value) for key, value in numbers.items() if value is not None})
    if spec.nodes is not None:
        job["minimum_nodes"] = spec.nodes
    if spec.args:
        # slurmstepd replaces argv[0] with the script's path: a placeholder goes there.
        job["argv"] = ["script", *spec.args]
    if spec.gres:
        job["tres_per_node"] = _gres_text(spec, "gres/")
    if spec.hold:
        job["hold"] = True
    return {"job": job}


def _begin_epoch(begin: str | None, now: float) -> int | None:
    """``now+N`` (the only form the library builds) as epoch seconds."""
    if begin is None:
        return None
    offset = begin.removeprefix("now+")
    if not offset.isdigit():
        raise ValueError(f"unsupported begin time {begin!r}")
    return int(now) + int(offset)


def submit_payload(spec: JobSpec, default_cwd: str, version: str, *, now: float) -> dict[str, Any]:
    """The ``job/submit`` body for an API version."""
    if version == "v0.0.38":
        return submit_payload_v0038(spec, default_cwd)
    return submit_payload_v0040(spec, default_cwd, now=now)
