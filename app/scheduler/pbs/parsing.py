"""Pure parsers from PBS's JSON (``qstat -f -F json``, ``qstat -Q``, ``pbsnodes -F json``) to
the scheduler library's value objects. Each keeps PBS's raw record in ``native``.

Job states: Q queued, H held, W waiting for its start time, T in transit, R running, E
exiting, B an array with tasks begun, S/U suspended, F finished, X an array task that ended,
M moved to another server. How a finished job ended is read from its ``Exit_status`` (the
script's exit code; 256 + N for a job killed by signal N; negative for PBS's own reasons,
-29 the walltime, -27 the memory limit) and its ``substate`` (91: deleted by qdel).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

from app.scheduler.months import MONTHS
from app.scheduler.nodes import NodeInfo, NodesReport, NodeState, PartitionAccess
from app.scheduler.pbs.commands import COMMENT_VARIABLE, RECORD_SEPARATOR
from app.scheduler.states import JobState
from app.scheduler.types import JobInfo, PartitionInfo, Tres

PBS_STATE_MAP: dict[str, JobState] = {
    "Q": JobState.QUEUED,
    "H": JobState.QUEUED_HELD,
    "W": JobState.QUEUED,
    "T": JobState.QUEUED,
    "R": JobState.RUNNING,
    "B": JobState.RUNNING,
    "E": JobState.COMPLETING,
    "S": JobState.SUSPENDED,
    "U": JobState.SUSPENDED,
}
"""Every state a job still in PBS's hands may have; F and X are read by ``ended_state``."""

EXIT_WALLTIME = -29
EXIT_MEM = -27
EXIT_VMEM = -26
SUBSTATE_TERMINATED = 91
SUBSTATE_FAILED = 93
SIGNAL_BASE = 256

_SIZE = re.compile(r"(?P<n>\d+)(?P<u>[kmgtp]?)(?P<w>b|w)?", re.IGNORECASE)
_UNITS = {"": 1, "k": 1024, "m": 1024**2, "g": 1024**3, "t": 1024**4, "p": 1024**5}


def load_json(text: str) -> dict[str, Any]:
    """PBS's JSON; an empty answer (nothing to list) is an empty object."""
    if not text.strip():
        return {}
    data = json.loads(text)
    return data if isinstance(data, dict) else {}


def parse_size(value: Any) -> int | None:
    """PBS's ``1024kb``, ``2gb`` or a bare number of bytes, in bytes."""
    if value is None or value == "":
        return None
    match = _SIZE.fullmatch(str(value).strip())
    if match is None:
        return None
    return int(match["n"]) * _UNITS[match["u"].lower()]


def parse_duration(value: Any) -> timedelta | None:
    """PBS's ``HH:MM:SS`` (hours may pass 24) or a number of seconds."""
    if value is None or value == "":
        return None
    parts = str(value).split(":")
    try:
        numbers = [int(p) for p in parts]
    except ValueError:
        return None
    seconds = 0
    for number in numbers:
        seconds = seconds * 60 + number
    return timedelta(seconds=seconds)


def parse_time(value: Any) -> datetime | None:
    """qstat's ``Fri Nov 27 20:00:00 2026``, printed under TZ=UTC, as UTC-aware.

    Read by hand: ``strptime`` took a third of a 10,000-job listing's parse. The weekday is
    not checked, as ``strptime`` does not check it against the date either.
    """
    if not value:
        return None
    try:
        _, month, day, clock, year = str(value).split()
        hour, minute, second = clock.split(":")
        return datetime(
            int(year), MONTHS[month], int(day), int(hour), int(minute), int(second), tzinfo=UTC
        )
    except (ValueError, KeyError):
        return None


def ended_state(record: Mapping[str, Any]) -> tuple[JobState, int | None, int | None]:
    """(state, exit code, signal) of a finished job or array task."""
    status = record.get("Exit_status")
    if status == EXIT_WALLTIME:
        return JobState.TIMEOUT, None, None
    if status in (EXIT_MEM, EXIT_VMEM):
        return JobState.OUT_OF_MEMORY, None, None
    if record.get("substate") == SUBSTATE_TERMINATED:
        return JobState.CANCELLED, None, None
    if not isinstance(status, int):
        return JobState.FAILED, None, None
    if status == 0:
        # An array ends with status 0 and substate "failed" when one of its tasks failed.
        failed = record.get("substate") == SUBSTATE_FAILED
        return (JobState.FAILED if failed else JobState.COMPLETED), 0, None
    if status >= SIGNAL_BASE:
        return JobState.FAILED, None, status - SIGNAL_BASE
    if status > 0:
        return JobState.FAILED, status, None
    # Negative: PBS could not start or keep the job (no such user, a hook refused it...).
    return JobState.FAILED, None, None


def job_state(record: Mapping[str, Any]) -> tuple[JobState, int | None, int | None]:
    """(state, exit code, signal) of any job record."""
    native = str(record.get("job_state", ""))
    if native in ("F", "X"):
        return ended_state(record)
    return PBS_STATE_MAP.get(native, JobState.UNDETERMINED), None, None


def _host_path(value: Any) -> str | None:
    """``pbshead:/home/alice/x.o1`` -> ``/home/alice/x.o1``."""
    if not value:
        return None
    return str(value).split(":", 1)[-1]


def _stderr_path(record: Mapping[str, Any]) -> str | None:
    """Where errors go: with ``-j oe`` into the output file, whatever Error_Path says."""
    if record.get("Join_Path") == "oe":
        return _host_path(record.get("Output_Path"))
    return _host_path(record.get("Error_Path"))


def _array_ids(job_id: str, record: Mapping[str, Any]) -> tuple[str | None, str | None]:
    """(array id, task) of a task; for the array itself, the tasks not started yet in
    brackets (``[2-3]``, as Slurm's pending array record), or None once every one has."""
    if "array_index" in record:
        return str(record.get("array_id") or ""), str(record["array_index"])
    if record.get("array") in (True, "True"):
        remaining = str(record.get("array_indices_remaining") or "-")
        return job_id, None if remaining == "-" else f"[{remaining}]"
    return None, None


def _elapsed(record: Mapping[str, Any]) -> int | None:
    used = parse_duration((record.get("resources_used") or {}).get("walltime"))
    return int(used.total_seconds()) if used is not None else None


def _alloc(record: Mapping[str, Any]) -> Tres:
    wanted = record.get("Resource_List") or {}
    return Tres(
        cpus=_int(wanted.get("ncpus")),
        memory_bytes=parse_size(wanted.get("mem")),
        gpus=_int(wanted.get("ngpus")),
        nodes=_int(wanted.get("nodect")),
    )


def _int(value: Any) -> int | None:
    try:
        return int(value) if value is not None else None
    except (TypeError, ValueError):
        return None


def _end_time(record: Mapping[str, Any]) -> datetime | None:
    if record.get("job_state") not in ("F", "X"):
        return None
    return parse_time(record.get("obittime")) or parse_time(record.get("mtime"))


def parse_job(job_id: str, record: Mapping[str, Any]) -> JobInfo:
    """One qstat record (a job, an array or an array task) as a JobInfo."""
    state, exit_code, signal = job_state(record)
    array_job_id, array_task_id = _array_ids(job_id, record)
    used = record.get("resources_used") or {}
    cput = parse_duration(used.get("cput"))
    variables = record.get("Variable_List") or {}
    wanted = record.get("Resource_List") or {}
    return JobInfo(
        job_id=job_id,
        state=state,
        native_state=str(record.get("job_state", "")),
        raw_job_id=job_id,
        array_job_id=array_job_id,
        array_task_id=array_task_id,
        reason=record.get("comment"),
        exit_code=exit_code,
        signal=signal,
        submit_time=parse_time(record.get("ctime")),
        start_time=parse_time(record.get("stime")),
        end_time=_end_time(record),
        time_limit=parse_duration(wanted.get("walltime")),
        elapsed_seconds=_elapsed(record),
        total_cpu_seconds=cput.total_seconds() if cput is not None else None,
        max_rss_bytes=parse_size(used.get("mem")),
        alloc=_alloc(record),
        nodes=_exec_hosts(record.get("exec_host")),
        user=str(record.get("Job_Owner", "")).split("@", 1)[0] or None,
        account=record.get("Account_Name"),
        partition=record.get("queue"),
        name=record.get("Job_Name"),
        comment=variables.get(COMMENT_VARIABLE),
        work_dir=variables.get("PBS_O_WORKDIR"),
        stdout_path=_host_path(record.get("Output_Path")),
        stderr_path=_stderr_path(record),
        native=dict(record),
    )


def _exec_hosts(value: Any) -> str | None:
    """``pbshead/0*2+node2/0`` -> ``pbshead,node2``."""
    if not value:
        return None
    hosts = [part.split("/", 1)[0] for part in str(value).split("+")]
    return ",".join(dict.fromkeys(hosts))


def parse_jobs(text: str) -> list[JobInfo]:
    """Every job of a ``qstat -f -F json`` answer, in PBS's order."""
    jobs = load_json(text).get("Jobs") or {}
    return [parse_job(job_id, record) for job_id, record in jobs.items()]


def split_status(text: str) -> tuple[str, str, str]:
    """The server's, the queues' and the nodes' JSON from ``status_argv``'s answer."""
    parts = text.split(RECORD_SEPARATOR)
    if len(parts) != 3:
        raise ValueError("expected the server, queues and nodes answers")
    return parts[0], parts[1], parts[2]


def default_queue(server_text: str) -> str | None:
    """The server's ``default_queue`` from ``qstat -B -f -F json``."""
    servers = load_json(server_text).get("Server") or {}
    for record in servers.values():
        return str(record.get("default_queue") or "") or None
    return None


def parse_queues(status_text: str) -> list[PartitionInfo]:
    """Queues as partitions, with the nodes' capacity, from ``status_argv``'s answer."""
    server_text, queues_text, nodes_text = split_status(status_text)
    default = default_queue(server_text)
    queues = load_json(queues_text).get("Queue") or {}
    nodes = parse_nodes_report(nodes_text, queues_text)
    total_cpus = sum(n.cpus_total for n in nodes.nodes)
    idle_cpus = sum(n.cpus_idle for n in nodes.nodes if n.state.takes_jobs)
    total_nodes = len(nodes.nodes)
    idle_nodes = sum(1 for n in nodes.nodes if n.state is NodeState.IDLE)
    return [
        PartitionInfo(
            name=name,
            max_time=parse_duration((queue.get("resources_max") or {}).get("walltime")),
            default_time=parse_duration((queue.get("resources_default") or {}).get("walltime")),
            is_default=name == default,
            state="up" if _is_up(queue) else "down",
            total_nodes=total_nodes,
            idle_nodes=idle_nodes,
            total_cpus=total_cpus,
            idle_cpus=idle_cpus,
        )
        for name, queue in queues.items()
        if queue.get("queue_type", "Execution") == "Execution"
    ]


def _is_up(queue: Mapping[str, Any]) -> bool:
    return queue.get("enabled") in (True, "True") and queue.get("started") in (True, "True")


def queue_access(name: str, queue: Mapping[str, Any]) -> PartitionAccess:
    """Who may submit to a queue: its user and group ACLs when they are enabled."""
    groups = None
    if queue.get("acl_group_enable") in (True, "True"):
        groups = tuple(str(queue.get("acl_groups", "")).split(","))
    native = {key: str(value) for key, value in queue.items()}
    return PartitionAccess(name=name, is_up=_is_up(queue), allow_groups=groups, native=native)


_NODE_STATES = {
    "free": NodeState.IDLE,
    "job-busy": NodeState.ALLOCATED,
    "job-exclusive": NodeState.ALLOCATED,
    "resv-exclusive": NodeState.RESERVED,
    "offline": NodeState.DRAINED,
    "down": NodeState.DOWN,
    "state-unknown": NodeState.UNKNOWN,
    "stale": NodeState.DOWN,
    "provisioning": NodeState.UNKNOWN,
}


def node_state(native: str, cpus_allocated: int) -> NodeState:
    """PBS's ``free``, ``job-busy``, ``offline,down``... as a NodeState."""
    words = [w.strip() for w in native.split(",") if w.strip()]
    for word in ("down", "stale", "offline", "state-unknown"):
        if word in words:
            return _NODE_STATES[word]
    state = _NODE_STATES.get(words[0], NodeState.UNKNOWN) if words else NodeState.UNKNOWN
    if state is NodeState.IDLE and cpus_allocated > 0:
        return NodeState.MIXED
    return state


def parse_node(name: str, record: Mapping[str, Any], queues: tuple[str, ...]) -> NodeInfo:
    """One ``pbsnodes -a -F json`` record; every queue may use every node unless the node
    names its own (``queue``)."""
    available = record.get("resources_available") or {}
    assigned = record.get("resources_assigned") or {}
    cpus_allocated = _int(assigned.get("ncpus")) or 0
    native_state = str(record.get("state", ""))
    own = record.get("queue")
    return NodeInfo(
        name=name,
        state=node_state(native_state, cpus_allocated),
        native_state=native_state,
        partitions=(str(own),) if own else queues,
        cpus_total=_int(available.get("ncpus")) or 0,
        cpus_allocated=cpus_allocated,
        memory_mb_total=(parse_size(available.get("mem")) or 0) // 1024**2,
        memory_mb_allocated=(parse_size(assigned.get("mem")) or 0) // 1024**2,
        gpus_total=_int(available.get("ngpus")) or 0,
        gpus_allocated=_int(assigned.get("ngpus")) or 0,
        reason=record.get("comment"),
        native={key: str(value) for key, value in record.items()},
    )


def parse_status_nodes(status_text: str) -> NodesReport:
    """Nodes and queues' access rules from ``status_argv``'s answer."""
    _, queues_text, nodes_text = split_status(status_text)
    return parse_nodes_report(nodes_text, queues_text)


def parse_nodes_report(nodes_text: str, queues_text: str) -> NodesReport:
    """Nodes and queues' access rules from ``pbsnodes -a`` and ``qstat -Q`` answers."""
    queues = load_json(queues_text).get("Queue") or {}
    access = tuple(queue_access(name, queue) for name, queue in queues.items())
    names = tuple(queues)
    records = load_json(nodes_text).get("nodes") or {}
    nodes = tuple(parse_node(name, record, names) for name, record in records.items())
    return NodesReport(nodes=nodes, partitions=access)
