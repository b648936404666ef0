"""Pure parsers for the text produced by the argv in ``commands``.

Slurm prints ``Unknown``/``None``/``N/A`` for absent values; they all become None here.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable, Iterator, Mapping
from datetime import UTC, datetime, timedelta

from app.scheduler.slurm.commands import SACCT_FIELDS, SEP, SINFO_FIELDS
from app.scheduler.slurm.marks import counted_records
from app.scheduler.states import JobState, state_from_slurm
from app.scheduler.types import Association, JobInfo, PartitionInfo, Tres

logger = logging.getLogger(__name__)

_ABSENT = frozenset({"", "unknown", "none", "n/a", "(null)", "invalid", "not_set"})
_UNLIMITED = frozenset({"unlimited", "infinite", "partition_limit"})
_DURATION = re.compile(r"(?:(?P<d>\d+)-)?(?:(?P<h>\d+):)??(?P<m>\d+):(?P<s>\d+)(?:\.(?P<f>\d+))?")
_SIZE = re.compile(r"(?P<n>\d+(?:\.\d+)?)(?P<u>[KMGTP]?)[cn]?", re.IGNORECASE)
_UNITS = {"": 1, "K": 1024, "M": 1024**2, "G": 1024**3, "T": 1024**4, "P": 1024**5}
_ARRAY_ID = re.compile(r"(?P<job>\d+)_(?P<task>\d+|\[[^\]]*\])")


def is_absent(value: str | None) -> bool:
    """True for the many ways Slurm prints 'no value'."""
    return value is None or value.strip().lower() in _ABSENT


def parse_duration(text: str | None) -> timedelta | None:
    """Parse ``1-02:03:04``, ``02:03:04``, ``03:04``, ``00:05.123`` or a bare minute count.

    ``UNLIMITED`` and absent values give None.
    """
    if is_absent(text) or text is None or text.strip().lower() in _UNLIMITED:
        return None
    value = text.strip()
    if value.isdigit():
        return timedelta(minutes=int(value))
    if re.fullmatch(r"\d+-\d+", value):
        days, hours = value.split("-")
        return timedelta(days=int(days), hours=int(hours))
    match = _DURATION.fullmatch(value)
    if match is None:
        raise ValueError(f"not a Slurm duration: {text!r}")
    fraction = float("0." + match["f"]) if match["f"] else 0.0
    return timedelta(
        days=int(match["d"] or 0),
        hours=int(match["h"] or 0),
        minutes=int(match["m"]),
        seconds=int(match["s"]) + fraction,
    )


def parse_size(text: str | None, default_unit: str = "") -> int | None:
    """Parse ``4208K``, ``1.5G``, ``100M`` or ``100Mn`` into bytes."""
    if is_absent(text) or text is None:
        return None
    match = _SIZE.fullmatch(text.strip())
    if match is None:
        raise ValueError(f"not a Slurm size: {text!r}")
    unit = (match["u"] or default_unit).upper()
    return int(float(match["n"]) * _UNITS[unit])


def parse_time(text: str | None) -> datetime | None:
    """Parse an ISO timestamp printed under ``TZ=UTC`` (or epoch seconds) as UTC-aware."""
    if is_absent(text) or text is None:
        return None
    value = text.strip()
    if value.isdigit():
        return None if int(value) == 0 else datetime.fromtimestamp(int(value), UTC)
    return datetime.fromisoformat(value).replace(tzinfo=UTC)


def parse_tres(text: str | None) -> Tres:
    """Parse ``billing=1,cpu=1,gres/gpu=2,mem=100M,node=1`` into a Tres."""
    if is_absent(text) or text is None:
        return Tres()
    values: dict[str, str] = {}
    for item in text.split(","):
        key, _, value = item.partition("=")
        values[key.strip()] = value.strip()
    gpus = [int(v) for k, v in values.items() if k == "gres/gpu" or k.startswith("gres/gpu:")]
    return Tres(
        cpus=int(values["cpu"]) if "cpu" in values else None,
        memory_bytes=parse_size(values.get("mem"), "M"),
        gpus=max(gpus) if gpus else None,
        nodes=int(values["node"]) if "node" in values else None,
    )


def parse_exit_code(text: str | None) -> tuple[int | None, int | None]:
    """Parse sacct's ``code:signal`` into (exit code, signal or None)."""
    if is_absent(text) or text is None or ":" not in text:
        return None, None
    code, _, signal = text.partition(":")
    sig = int(signal)
    return int(code), (sig or None)


def decode_wait_status(status: int | None) -> tuple[int | None, int | None]:
    """Split a raw wait status into (exit code, signal or None)."""
    if status is None:
        return None, None
    signal = status & 0x7F
    return (status >> 8) & 0xFF, (signal or None)


def parse_squeue_exit(text: str) -> tuple[int | None, int | None]:
    """squeue's exit code field: a raw wait status (``768``) up to 22.05, ``3:0`` since 23.02."""
    value = text.strip()
    if ":" in value:
        return parse_exit_code(value)
    return decode_wait_status(int(value)) if value.isdigit() else (None, None)


def split_array_id(job_id: str) -> tuple[str | None, str | None]:
    """``12_3`` -> ("12", "3"); ``12_[4-9%2]`` -> ("12", "[4-9%2]"); plain ids -> (None, None)."""
    match = _ARRAY_ID.fullmatch(job_id)
    if match is None:
        return None, None
    return match["job"], match["task"]


def expand_output_path(
    pattern: str | None,
    *,
    job_id: str,
    name: str | None,
    user: str | None,
    array_job_id: str | None = None,
    array_task_id: str | None = None,
    raw_job_id: str | None = None,
) -> str | None:
    """Expand sbatch filename patterns (%j %x %A %a %u %%) where the values are known.

    ``%j`` is the record's own number (``raw_job_id``): an array task's differs from its
    array's. Without it, a task's ``%j`` is left for the caller, never guessed; the pending
    rest of an array keeps ``%j`` and ``%a``, which each task fills in.
    """
    if is_absent(pattern) or pattern is None:
        return None
    if "%" not in pattern:  # most paths: nothing to expand, and a queue has 100,000 of them
        return pattern
    is_single_task = array_task_id is not None and array_task_id.isdigit()
    if array_task_id is not None:  # a task, or the pending rest of an array: each its own
        raw_id = raw_job_id if is_single_task else None
    else:
        raw_id = raw_job_id or job_id
    values = {
        "j": raw_id,
        "J": raw_id,
        "x": name,
        "u": user,
        "A": array_job_id if is_single_task else (None if array_task_id else raw_id),
        "a": array_task_id if is_single_task else (None if array_task_id else "4294967294"),
        "%": "%",
    }

    def replace(match: re.Match[str]) -> str:
        value = values.get(match[1])
        return match[0] if value is None else value

    return re.sub(r"%(.)", replace, pattern)


# Only CR and LF end a line: splitlines would also split at the other ASCII separators.
_LINE = re.compile(r"[^\r\n]+")


def lines(text: str) -> Iterator[str]:
    """A listing's non-blank lines, one at a time."""
    for found in _LINE.finditer(text):
        line = found.group()
        if line.strip():
            yield line


def split_rows(text: str, width: int) -> Iterable[list[str]]:
    """Rows of a listing whose fields hold no free text (sinfo): a wrong count is a broken
    listing."""
    for line in lines(text):
        cells = line.split(SEP)
        if len(cells) != width:
            raise ValueError(f"expected {width} fields, got {len(cells)}: {line[:120]!r}")
        yield [cell.strip() for cell in cells]


def value_or_none(value: str) -> str | None:
    return None if is_absent(value) else value


def whole_seconds(delta: timedelta | None) -> int | None:
    return None if delta is None else int(delta.total_seconds())


def parse_sacct(text: str, delimiter: str = SEP) -> list[JobInfo]:
    """Parse ``sacct_argv(delimiter=...)`` output; step rows are folded into their job's
    record. A record that is not whole is left out and reported."""
    jobs: dict[str, dict[str, str]] = {}
    max_rss: dict[str, int] = {}
    unfinished: list[str] = []
    for line in counted_records(text, delimiter, len(SACCT_FIELDS), unfinished):
        row = [cell.strip() for cell in line.split(delimiter)]
        record = dict(zip(SACCT_FIELDS, row, strict=True))
        job_key, _, step = record["JobID"].partition(".")
        if not step:
            jobs[job_key] = record
            continue
        rss = parse_size(record["MaxRSS"])
        if rss is not None:
            max_rss[job_key] = max(rss, max_rss.get(job_key, 0))
    if unfinished:
        logger.warning(
            "sacct: %d record(s) left out, not in the format asked for; the first: %r",
            len(unfinished),
            unfinished[0][:200],
        )
    return [_sacct_job(record, max_rss.get(key)) for key, record in jobs.items()]


def _sacct_job(row: Mapping[str, str], max_rss: int | None) -> JobInfo:
    job_id = row["JobID"]
    array_job_id, array_task_id = split_array_id(job_id)
    reason = value_or_none(row["Reason"])
    state = state_from_slurm(row["State"], reason)
    if state is JobState.QUEUED and row["Priority"] == "0":
        state = JobState.QUEUED_HELD
    exit_code, signal = parse_exit_code(row["ExitCode"]) if state.is_terminal else (None, None)
    total_cpu = parse_duration(row["TotalCPU"])
    elapsed = row["ElapsedRaw"]
    return JobInfo(
        job_id=job_id,
        raw_job_id=value_or_none(row["JobIDRaw"]),
        array_job_id=array_job_id,
        array_task_id=array_task_id,
        state=state,
        native_state=row["State"],
        reason=reason,
        exit_code=exit_code,
        signal=signal,
        submit_time=parse_time(row["Submit"]),
        start_time=parse_time(row["Start"]),
        end_time=parse_time(row["End"]),
        time_limit=parse_duration(row["Timelimit"]),
        elapsed_seconds=int(elapsed) if elapsed.isdigit() else None,
        total_cpu_seconds=None if total_cpu is None else total_cpu.total_seconds(),
        max_rss_bytes=max_rss,
        alloc=parse_tres(row["AllocTRES"]),
        nodes=value_or_none(row["NodeList"]),
        user=value_or_none(row["User"]),
        account=value_or_none(row["Account"]),
        partition=value_or_none(row["Partition"]),
        name=row["JobName"],
        comment=value_or_none(row["Comment"]),
        work_dir=value_or_none(row["WorkDir"]),
        native=dict(row),
    )


def parse_sinfo(text: str) -> list[PartitionInfo]:
    """Parse ``sinfo_argv()`` output (one line per partition)."""
    keys = [key for key, _ in SINFO_FIELDS]
    partitions = []
    for row in split_rows(text, len(keys)):
        cells = dict(zip(keys, row, strict=True))
        name = cells["partition"]
        _alloc_n, idle_n, _other_n, total_n = (int(n) for n in cells["nodes"].split("/"))
        _alloc_c, idle_c, _other_c, total_c = (int(n) for n in cells["cpus"].split("/"))
        partitions.append(
            PartitionInfo(
                name=name.rstrip("*"),
                max_time=parse_duration(cells["max_time"]),
                default_time=parse_duration(cells["default_time"]),
                is_default=name.endswith("*"),
                state=cells["avail"],
                total_nodes=total_n,
                idle_nodes=idle_n,
                total_cpus=total_c,
                idle_cpus=idle_c,
            )
        )
    return partitions


def _gres_kind(item: str) -> tuple[str, str] | None:
    """``gpu:a100:2(S:0-1)`` → ("gpu", "a100"); ``mps:100`` → ("mps", "")."""
    parts = item.split("(", 1)[0].strip().split(":")
    if not parts[0] or is_absent(parts[0]):
        return None
    if len(parts) >= 3 or (len(parts) == 2 and not parts[1].isdigit()):
        return parts[0], parts[1]
    return parts[0], ""


def parse_gres(text: str) -> dict[str, set[tuple[str, str]]]:
    """``gres_argv()`` output as partition → {(name, type)} of the GRES its nodes have."""
    found: dict[str, set[tuple[str, str]]] = {}
    for line in text.splitlines():
        partition, _, gres = line.partition(SEP)
        kinds = found.setdefault(partition.strip(), set())
        # Commas inside the socket list "(S:0,1)" do not separate resources.
        for item in re.split(r",(?![^(]*\))", gres):
            kind = _gres_kind(item)
            if kind is not None:
                kinds.add(kind)
    return found


def parse_associations(text: str) -> list[Association]:
    """Parse ``associations_argv()`` output (``account|partition|qos,qos``)."""
    result = []
    for line in text.splitlines():
        if not line.strip():
            continue
        account, partition, qos = [*line.split("|"), "", ""][:3]
        result.append(
            Association(
                account=account.strip(),
                partition=partition.strip() or None,
                qos=tuple(q for q in qos.strip().split(",") if q),
            )
        )
    return result


def parse_read_chunk(output: bytes, offset: int) -> tuple[int, bytes]:
    """Split ``read_chunk_argv`` output into (file size, data)."""
    head, newline, data = output.partition(b"\n")
    if not newline or not head.strip().isdigit():
        raise ValueError("missing size line in file read output")
    return int(head), data
