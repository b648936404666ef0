"""slurmrestd API versions and the steps that upgrade each one's payloads to the newest shape.

The library reads one canonical shape, the newest API's (``API_VERSIONS[0]``). A payload from an
older API is brought there one version at a time: each step changes only what differs between
two neighbouring versions in the fields this library reads, so a new API version costs one
small step, and a fixture recorded from each version proves its step.

What changed, as observed on real Slurm 22.05, 24.11 and 26.05 output:
- v0.0.38 → v0.0.40 (23.11): integers became number objects ``{"set", "infinite", "number"}``;
  ``job_state`` became a list of the state and its flags; the raw wait status in
  ``exit_code`` became ``{"status": [...], "return_code": {...}, "signal": {...}}``; a ping
  says ``pinged`` instead of ``ping``; submit bodies take the environment as ``K=V`` strings;
  a job listing carries ``last_update``.
- v0.0.40 → v0.0.41: nothing this library reads.
- v0.0.41 → v0.0.42: a ping says ``responding`` (a boolean) beside ``pinged``; a DELETE
  reports each job's failure in ``status[]`` (v0.0.40 and v0.0.41 answer 200 and say
  nothing when an unknown or another user's job was not cancelled); ``update_time`` may be
  an epoch.
- v0.0.42 → v0.0.43: jobs carry ``stdout_expanded`` / ``stderr_expanded``.
- v0.0.43 → v0.0.44 → v0.0.45: nothing this library reads (v0.0.45 drops ``pinged``; the
  canonical ping is read from ``responding``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

Job = dict[str, Any]

API_VERSIONS: tuple[str, ...] = (
    "v0.0.45",
    "v0.0.44",
    "v0.0.43",
    "v0.0.42",
    "v0.0.41",
    "v0.0.40",
    "v0.0.38",
)
"""Versions this library speaks, newest first; discovery picks the newest one offered."""


def choose_version(paths: Iterable[str]) -> tuple[str | None, list[str]]:
    """The newest API this library speaks among ``/openapi/v3`` paths, and all offered.

    23.11 and later list paths with a trailing slash (``/slurm/v0.0.42/ping/``).
    """
    clean = {str(path).rstrip("/") for path in paths}
    offered = sorted({p.split("/")[2] for p in clean if p.startswith("/slurm/v")}, reverse=True)
    usable = [v for v in API_VERSIONS if f"/slurm/{v}/ping" in clean]
    return (usable[0] if usable else None), offered


_NUMBER_FIELDS = (
    "array_job_id",
    "array_task_id",
    "start_time",
    "end_time",
    "submit_time",
    "time_limit",
)


def number(value: Any) -> dict[str, Any]:
    """A v0.0.40+ number object for a plain integer (``None`` or 0-as-unset → unset)."""
    if isinstance(value, dict):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return {"set": True, "infinite": False, "number": value}
    return {"set": False, "infinite": False, "number": 0}


def number_value(value: Any) -> int | None:
    """The integer a number object (or a bare integer) holds; None when unset or infinite."""
    if isinstance(value, dict):
        if not value.get("set") or value.get("infinite"):
            return None
        value = value.get("number")
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    return None


def _wait_status_object(status: Any) -> dict[str, Any]:
    if not isinstance(status, int):
        return {"status": [], "return_code": number(None), "signal": {"id": number(None)}}
    code, signal = (status >> 8) & 0xFF, status & 0x7F
    kind = "SIGNALED" if signal else ("SUCCESS" if code == 0 else "ERROR")
    return {
        "status": [kind],
        "return_code": number(code),
        "signal": {"id": number(signal or None), "name": ""},
    }


def _job_v38_to_v40(job: Job) -> Job:
    upgraded = dict(job)
    for key in _NUMBER_FIELDS:
        value = job.get(key)
        # v0.0.38 writes 0 for "no array"; a task id of None means "not a single task".
        upgraded[key] = number(value if value or key.endswith("_time") else None)
    state = job.get("job_state")
    upgraded["job_state"] = [state] if isinstance(state, str) and state else []
    upgraded["exit_code"] = _wait_status_object(job.get("exit_code"))
    return upgraded


def _job_v42_to_v43(job: Job) -> Job:
    upgraded = dict(job)
    # Older versions only give the pattern; the mapper expands what it can itself.
    upgraded.setdefault("stdout_expanded", job.get("standard_output"))
    upgraded.setdefault("stderr_expanded", job.get("standard_error"))
    return upgraded


def _ping_v38_to_v40(ping: Job) -> Job:
    upgraded = dict(ping)
    upgraded.setdefault("pinged", ping.get("ping"))
    return upgraded


def _ping_v41_to_v42(ping: Job) -> Job:
    upgraded = dict(ping)
    # v0.0.42 added the boolean that v0.0.45 keeps once "pinged" is gone.
    upgraded.setdefault("responding", ping.get("pinged") == "UP")
    return upgraded


# The step that leaves each version; a version missing here changed nothing this library reads.
_JOB_STEPS: Mapping[str, Callable[[Job], Job]] = {
    "v0.0.38": _job_v38_to_v40,
    "v0.0.42": _job_v42_to_v43,
}
_PING_STEPS: Mapping[str, Callable[[Job], Job]] = {
    "v0.0.38": _ping_v38_to_v40,
    "v0.0.41": _ping_v41_to_v42,
}


def _upgrade(
    item: Mapping[str, Any], version: str, steps: Mapping[str, Callable[[Job], Job]]
) -> Job:
    if version not in API_VERSIONS:
        raise ValueError(f"unknown slurmrestd API version {version!r}")
    current = dict(item)
    # API_VERSIONS runs newest first: walk from ``version`` up to the newest, applying the
    # step that leaves each version on the way.
    for older in reversed(API_VERSIONS[1 : API_VERSIONS.index(version) + 1]):
        step = steps.get(older)
        if step is not None:
            current = step(current)
    return current


def reports_cancel_failures(version: str) -> bool:
    """Whether a DELETE in this API says whenever a job was not cancelled.

    v0.0.40 and v0.0.41 answer 200 and nothing else for an unknown or another user's job;
    v0.0.38 says nothing for a job that has already ended. v0.0.42+ report each in
    ``status[]``.
    """
    return version not in _SILENT_DELETE


_SILENT_DELETE = frozenset({"v0.0.38", "v0.0.40", "v0.0.41"})


def upgrade_job(job: Mapping[str, Any], version: str) -> Job:
    """A ``/slurm/<version>/jobs`` record in the canonical (newest) shape."""
    return _upgrade(job, version, _JOB_STEPS)


def upgrade_ping(ping: Mapping[str, Any], version: str) -> Job:
    """A ``/slurm/<version>/ping`` entry in the canonical shape."""
    return _upgrade(ping, version, _PING_STEPS)


def update_time_form(version: str) -> str | None:
    """How this API takes ``update_time`` on ``GET jobs``: ``"epoch"``, ``"relative"`` or None.

    Observed on 24.11 and 26.05: v0.0.42+ take an epoch (the listing's own ``last_update``);
    v0.0.40 and v0.0.41 refuse one ("Parsing of … for timestamp failed", 422) but take Slurm's
    time forms, e.g. ``now-12``; v0.0.38 takes neither form and its listings carry no
    ``last_update`` to ask with.
    """
    if version in _RELATIVE_UPDATE_TIME:
        return "relative"
    return None if version == "v0.0.38" else "epoch"


_RELATIVE_UPDATE_TIME = frozenset({"v0.0.40", "v0.0.41"})
