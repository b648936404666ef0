"""Pure parsers from LSF's output to the scheduler's value objects.

Each JobInfo keeps LSF's own fields in ``native`` (header, limits, events' words). Why a job
ended is told by LSF 9+ as TERM_* reasons; OpenLava 2.2 logs only what a person asked
(``Signal <KILL> requested by user or administrator <alice>``), so a run or memory limit is
recognised by what it leaves: a job that exited after running its whole RUNLIMIT, or one with
a MEMLIMIT that a signal ended without anyone asking.

A kill asked for in the second a job starts may be booked by OpenLava as "Done successfully"
(exit 0) right after the logged ``Signal <KILL> requested`` (sbatchd seems to take a job it
cannot signal yet for gone, with no exit status collected). Such a job was cancelled, not
completed; only bhist shows the request, bjobs -l says DONE.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from app.scheduler.lsf import long_form
from app.scheduler.lsf.commands import COMMENT_MARK
from app.scheduler.lsf.long_form import Event, LongRecord, bracketed
from app.scheduler.lsf.states import state_from_lsf
from app.scheduler.states import JobState
from app.scheduler.types import JobInfo, PartitionInfo, Tres

JOB_ID = re.compile(r"(?P<job>\d+)(?:\[(?P<index>\d+)\])?")
"""An LSF job id: ``12``, or ``12[3]`` for an array's task."""
_EXIT = re.compile(r"Exited with exit code (\d+)")
_SIGNAL = re.compile(r"Exited by signal (\d+)")
_CPU = re.compile(r"The CPU time used is ([\d.]+) seconds?")
_STARTED = re.compile(
    r"(?:^\[\d+\] )?(?:[Ss]tarted on|Dispatched to) (?:(\d+) Hosts/Processors )?<([^>]*)>"
)
_KILLED_BY = re.compile(r"Signal <([A-Z_0-9]+)> requested by user or administrator <([^>]*)>")
_SUBMITTED = re.compile(r"^(\d+) (?:Hosts/)?Processors Requested")
_MEM = re.compile(r"MEM: (\d+) Mbytes")


@dataclass(slots=True)
class _Facts:
    """What a record's events say, gathered in one pass."""

    submitted: datetime | None = None
    started: datetime | None = None
    ended: datetime | None = None
    exit_code: int | None = None
    signal: int | None = None
    cpu_seconds: float | None = None
    cwd: str | None = None
    home: str | None = None
    stdout: str | None = None
    stderr: str | None = None
    hosts: str | None = None
    processors: int | None = None
    mem_mb: int | None = None
    killed_with: str | None = None
    killed_by: str | None = None
    killed_before_end: bool = False
    queue: str | None = None
    held: bool = False


def parse_jobs(text: str, now: datetime) -> list[JobInfo]:
    """``bjobs -l`` (or ``bhist -l``) output → one JobInfo per job and array task."""
    return [job_info(record, now) for record in long_form.records(text, now)]


def job_info(record: LongRecord, now: datetime) -> JobInfo:
    """One record as a JobInfo (bhist's have no Status: it is read from the events)."""
    header = record.header
    facts = _facts(record.events)
    match = JOB_ID.fullmatch(header.get("Job", ""))
    job_id = header.get("Job", "")
    master = match["job"] if match else job_id
    index = match["index"] if match else None
    native_state = header.get("Status") or _state_from_events(facts)
    state, reason = end_state(native_state, record, facts)
    name, comment = split_name(header.get("Job Name", ""), index is not None)
    cwd = _resolve_home(facts.cwd, facts.home)
    return JobInfo(
        job_id=job_id,
        state=state,
        native_state=native_state,
        raw_job_id=job_id,
        array_job_id=master if index is not None else None,
        array_task_id=index,
        reason=reason,
        exit_code=facts.exit_code,
        signal=facts.signal,
        submit_time=facts.submitted,
        start_time=facts.started,
        end_time=facts.ended,
        time_limit=long_form.run_limit(record.limits.get("RUNLIMIT")),
        elapsed_seconds=_elapsed(facts, now),
        total_cpu_seconds=facts.cpu_seconds,
        alloc=Tres(cpus=facts.processors if facts.started else None),
        nodes=facts.hosts,
        user=header.get("User"),
        account=header.get("Project"),
        partition=header.get("Queue") or facts.queue,
        name=name,
        comment=comment,
        work_dir=cwd,
        stdout_path=_output(facts.stdout, cwd, master, index),
        stderr_path=_output(facts.stderr or facts.stdout, cwd, master, index),
        native=_native(record, facts),
    )


def end_state(native: str, record: LongRecord, facts: _Facts) -> tuple[JobState, str | None]:
    """The state, and LSF's TERM_* reason for a job LSF ended (or the pending reasons)."""
    state = state_from_lsf(native)
    if state is JobState.QUEUED or state is JobState.QUEUED_HELD:
        return state, "; ".join(record.pending_reasons) or None
    if native == "DONE" and facts.killed_with == "KILL" and facts.killed_before_end:
        return JobState.CANCELLED, _kill_reason(record, facts)
    if native != "EXIT":
        return state, None
    if facts.killed_with is not None:
        return JobState.CANCELLED, _kill_reason(record, facts)
    limit = long_form.run_limit(record.limits.get("RUNLIMIT"))
    ran = _ran(facts)
    if limit is not None and ran is not None and ran >= limit:
        return JobState.TIMEOUT, "TERM_RUNLIMIT"
    if "MEMLIMIT" in record.limits and _ended_by_signal(facts):
        return JobState.OUT_OF_MEMORY, "TERM_MEMLIMIT"
    return JobState.FAILED, None


def _kill_reason(record: LongRecord, facts: _Facts) -> str:
    return "TERM_OWNER" if facts.killed_by == record.header.get("User") else "TERM_ADMIN"


def _ended_by_signal(facts: _Facts) -> bool:
    # The job's shell reports a signal as 128 + its number.
    return facts.signal is not None or (facts.exit_code is not None and facts.exit_code > 128)


def split_name(name: str, is_task: bool) -> tuple[str, str | None]:
    """(the job's name, the portal's UUID) from ``train#portal:UUID[3]``."""
    if is_task:
        name = re.sub(r"\[\d+\]$", "", name)
    name = re.sub(r"\[[0-9,:-]+\](%\d+)?$", "", name)
    plain, mark, comment = name.partition(COMMENT_MARK)
    return plain, (comment if mark else None)


def _facts(events: Iterable[Event]) -> _Facts:
    facts = _Facts()
    for event in events:
        _read_event(facts, event)
    return facts


def _read_event(facts: _Facts, event: Event) -> None:
    text = event.text
    if text.startswith("Submitted from host"):
        facts.submitted = event.when
        facts.cwd = bracketed(text, "CWD")
        facts.stdout = bracketed(text, "Output File")
        facts.stderr = bracketed(text, "Error File")
        facts.queue = bracketed(text, "to Queue")
        facts.held = " with hold," in text
        for part in text.split(", "):
            if (count := _SUBMITTED.match(part)) is not None:
                facts.processors = int(count[1])
    elif "resumed by user" in text or "Job resumed" in text:
        facts.held = False
    elif "suspended by" in text.lower() and facts.started is None:
        facts.held = True
    elif (started := _STARTED.search(text)) is not None:
        facts.started = facts.started or event.when
        if started is not None:
            facts.processors = int(started[1] or facts.processors or 1)
            facts.hosts = started[2]
        facts.home = bracketed(text, "Execution Home") or facts.home
        facts.cwd = bracketed(text, "Execution CWD") or facts.cwd
    elif text.startswith("Running with execution home"):
        facts.home = bracketed(text, "execution home") or facts.home
        facts.cwd = bracketed(text, "Execution CWD") or facts.cwd
    elif text.startswith(("Done successfully", "Exited")):
        _read_end(facts, event)
    elif (killed := _KILLED_BY.search(text)) is not None:
        facts.killed_with, facts.killed_by = killed[1], killed[2]
        facts.killed_before_end = facts.ended is None
    elif (mem := _MEM.search(text)) is not None:
        facts.mem_mb = int(mem[1])


def _read_end(facts: _Facts, event: Event) -> None:
    facts.ended = event.when
    text = event.text
    if text.startswith("Done successfully"):
        facts.exit_code = 0
    elif (code := _EXIT.search(text)) is not None:
        facts.exit_code = int(code[1])
    elif (signal := _SIGNAL.search(text)) is not None:
        facts.signal = int(signal[1])
    if (cpu := _CPU.search(text)) is not None:
        facts.cpu_seconds = float(cpu[1])


def _state_from_events(facts: _Facts) -> str:
    """bhist prints no Status: the last thing that happened says it."""
    if facts.ended is not None:
        return "DONE" if facts.exit_code == 0 else "EXIT"
    if facts.started is not None:
        return "RUN"
    return "PSUSP" if facts.held else "PEND"


def _ran(facts: _Facts) -> timedelta | None:
    if facts.started is None or facts.ended is None:
        return None
    return facts.ended - facts.started


def _elapsed(facts: _Facts, now: datetime) -> int | None:
    if facts.started is None:
        return None
    return max(0, int(((facts.ended or now) - facts.started).total_seconds()))


def _resolve_home(path: str | None, home: str | None) -> str | None:
    if path is None or home is None:
        return path
    if path == "$HOME" or path.startswith("$HOME/"):
        return home + path.removeprefix("$HOME")
    return path


def _output(path: str | None, cwd: str | None, master: str, index: str | None) -> str | None:
    """The file LSF writes: %J and %I filled in, relative to the job's working directory."""
    if path is None:
        return None
    filled = re.sub(r"%([JI%])", lambda m: {"J": master, "I": index or "0", "%": "%"}[m[1]], path)
    if cwd is not None and not filled.startswith("/") and not cwd.startswith("$"):
        return posixpath.join(cwd, filled)
    return filled


def _native(record: LongRecord, facts: _Facts) -> dict[str, Any]:
    native: dict[str, Any] = dict(record.header)
    native["limits"] = dict(record.limits)
    native["pending_reasons"] = list(record.pending_reasons)
    if facts.mem_mb is not None:
        native["mem_mb"] = facts.mem_mb
    if facts.killed_with is not None:
        native["killed"] = {"signal": facts.killed_with, "by": facts.killed_by}
    return native


_SUBMITTED_ANSWER = re.compile(r"Job <(\d+)> is submitted to (?:default )?queue <([^>]*)>")


def submitted_job_id(stdout: str) -> str | None:
    """The id in ``Job <123> is submitted to default queue <normal>.``"""
    match = _SUBMITTED_ANSWER.search(stdout)
    return match[1] if match else None


def parse_queues(bqueues: str, bhosts: str) -> list[PartitionInfo]:
    """``bqueues -l`` and ``bhosts -w`` → one PartitionInfo per queue (every queue spans
    every host here: OpenLava's default, which the dev cluster keeps)."""
    total_nodes, idle_nodes, total_slots, used_slots = _host_counts(bhosts)
    queues = []
    for block in re.split(r"^-{20,}$", long_form.unwrap(bqueues), flags=re.MULTILINE):
        name = re.search(r"^QUEUE: (\S+)", block, re.MULTILINE)
        if name is None:
            continue
        lines = block.split("\n")
        limits: dict[str, str] = {}
        for number, line in enumerate(lines[:-1]):
            if re.match(r"^ [A-Z]+LIMIT", line):
                limits.update(long_form.limit_table(line, lines[number + 1]))
        status = re.search(r"^ *\d+ +\d+ +(\S+)", block, re.MULTILINE)
        queues.append(
            PartitionInfo(
                name=name[1],
                max_time=long_form.run_limit(limits.get("RUNLIMIT")),
                default_time=None,
                is_default="This is the default queue" in block,
                state="UP" if status and status[1].endswith(":Active") else "DOWN",
                total_nodes=total_nodes,
                idle_nodes=idle_nodes,
                total_cpus=total_slots,
                idle_cpus=max(0, total_slots - used_slots),
            )
        )
    return queues


def queue_process_limit(bqueues: str) -> dict[str, int]:
    """Each queue's PROCLIMIT (the most cores one job may ask for), where it has one."""
    found: dict[str, int] = {}
    for block in re.split(r"^-{20,}$", long_form.unwrap(bqueues), flags=re.MULTILINE):
        name = re.search(r"^QUEUE: (\S+)", block, re.MULTILINE)
        lines = block.split("\n")
        for number, line in enumerate(lines[:-1]):
            if name and re.match(r"^ [A-Z]+LIMIT", line):
                value = long_form.limit_table(line, lines[number + 1]).get("PROCLIMIT")
                if value and value.split()[-1].isdigit():
                    found[name[1]] = int(value.split()[-1])
    return found


def _host_counts(bhosts: str) -> tuple[int, int, int, int]:
    total = idle = slots = used = 0
    for line in bhosts.splitlines()[1:]:
        words = line.split()
        if len(words) < 5:
            continue
        total += 1
        maximum = int(words[3]) if words[3].isdigit() else 0
        running = int(words[4]) if words[4].isdigit() else 0
        slots += maximum
        used += running
        idle += words[1] == "ok" and running == 0
    return total, idle, slots, used
