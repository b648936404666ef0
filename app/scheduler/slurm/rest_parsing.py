"""Pure mapping between slurmrestd v0.0.38 / dbv0.0.38 JSON and the library's types.

Exit codes: ``/slurm/v0.0.38`` reports the raw wait status (``code = s >> 8``,
``signal = s & 0x7f``). ``/slurmdb/v0.0.38`` reports ``SUCCESS/0`` for ordinary non-zero
exits in 22.05, so its exit code is only trusted for COMPLETED jobs and signals; otherwise
it is left unknown (None) and accounting goes through ``sacct`` instead (see ADR 0003).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

from app.scheduler.slurm.parsing import decode_wait_status, expand_output_path, parse_tres
from app.scheduler.states import JobState, state_from_slurm
from app.scheduler.types import JobInfo, JobSpec, Tres

API_VERSIONS: tuple[str, ...] = ("v0.0.40", "v0.0.39", "v0.0.38")
"""Versions probed newest first; only v0.0.38 has a verified payload mapping."""

SUPPORTED_VERSIONS: frozenset[str] = frozenset({"v0.0.38"})


def _epoch(value: Any) -> datetime | None:
    if not isinstance(value, int) or value <= 0:
        return None
    return datetime.fromtimestamp(value, UTC)


def _text(value: Any) -> str | None:
    if value is None:
        return None
    text = str(value)
    return None if text in ("", "None") else text


def _v38_ids(job: Mapping[str, Any]) -> tuple[str, str | None, str | None]:
    job_id = str(job["job_id"])
    array_job = job.get("array_job_id") or 0
    task = job.get("array_task_id")
    if not array_job:
        return job_id, None, None
    if task is None:
        pending = job.get("array_task_string") or ""
        return f"{array_job}_[{pending}]", str(array_job), f"[{pending}]"
    return f"{array_job}_{task}", str(array_job), str(task)


def _v38_paths(
    job: Mapping[str, Any], array_job_id: str | None, array_task_id: str | None
) -> dict[str, str | None]:
    return {
        key: expand_output_path(
            _text(job.get(key)),
            job_id=str(job["job_id"]),
            name=_text(job.get("name")),
            user=_text(job.get("user_name")),
            array_job_id=array_job_id,
            array_task_id=array_task_id,
        )
        for key in ("standard_output", "standard_error")
    }


def job_from_v0038(job: Mapping[str, Any]) -> JobInfo:
    """Map one ``/slurm/v0.0.38/jobs`` (or ``squeue --json``) record onto a JobInfo."""
    job_id, array_job_id, array_task_id = _v38_ids(job)
    reason = _text(job.get("state_reason"))
    state = state_from_slurm(str(job.get("job_state", "")), reason)
    exit_code, signal = (
        decode_wait_status(job.get("exit_code")) if state.is_terminal else (None, None)
    )
    start, end = _epoch(job.get("start_time")), _epoch(job.get("end_time"))
    limit = job.get("time_limit")
    user, name = _text(job.get("user_name")), _text(job.get("name"))
    paths = _v38_paths(job, array_job_id, array_task_id)
    return JobInfo(
        job_id=job_id,
        array_job_id=array_job_id,
        array_task_id=array_task_id,
        state=state,
        native_state=str(job.get("job_state", "")),
        reason=reason,
        exit_code=exit_code,
        signal=signal,
        submit_time=_epoch(job.get("submit_time")),
        start_time=start,
        end_time=end if state.is_terminal else None,
        time_limit=timedelta(minutes=limit) if isinstance(limit, int) and limit > 0 else None,
        elapsed_seconds=_elapsed(state, start, end),
        alloc=parse_tres(_text(job.get("tres_alloc_str"))),
        nodes=_text(job.get("nodes")),
        user=user,
        account=_text(job.get("account")),
        partition=_text(job.get("partition")),
        name=name,
        comment=_text(job.get("comment")),
        work_dir=_text(job.get("current_working_directory")),
        stdout_path=paths["standard_output"],
        stderr_path=paths["standard_error"] or paths["standard_output"],
        native=dict(job),
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


def submit_payload_v0038(spec: JobSpec, default_cwd: str) -> dict[str, Any]:
    """The v0.0.38 ``job/submit`` body; environment is a dict and the cwd is always sent."""
    job: dict[str, Any] = {
        "name": spec.name,
        "current_working_directory": spec.working_dir or default_cwd,
        "environment": dict(spec.environment) or {"PATH": "/usr/local/bin:/usr/bin:/bin"},
    }
    optional: dict[str, Any] = {
        "account": spec.account,
        "partition": spec.partition,
        "qos": spec.qos,
        "time_limit": spec.time_limit_minutes,
        "cpus_per_task": spec.cpus_per_task,
        "tasks": spec.ntasks,
        "nodes": spec.nodes,
        "memory_per_node": spec.memory_mb,
        "memory_per_cpu": spec.mem_per_cpu_mb,
        "array": spec.array,
        "standard_output": spec.stdout,
        "standard_error": spec.stderr,
        "dependency": spec.dependency,
        "comment": spec.comment,
        "begin_time": spec.begin,
    }
    job.update({key: value for key, value in optional.items() if value is not None})
    if spec.gres:
        job["gres"] = ",".join(
            ":".join(p for p in (g.name, g.type, str(g.count)) if p) for g in spec.gres
        )
    if spec.hold:
        job["hold"] = True
    return {"script": spec.script, "job": job}
