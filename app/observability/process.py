"""The process's own resource figures under Prometheus's conventional ``process_*`` names.

Read from ``/proc/self`` at scrape time, so a dashboard can show each web replica's and
poller's memory over days and an alert can fire on growth. Where ``/proc`` is missing
(not Linux) the series are simply absent.
"""

from __future__ import annotations

import functools
import os
import resource
import time
from collections.abc import Callable, Iterable
from pathlib import Path

PROC_SELF = Path("/proc/self")
# /proc/self/stat gives the process's start in clock ticks since boot.
_CLOCK_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


ProcessReader = Callable[[], float | None]


class ProcessMetric:
    """One ``process_*`` series computed when scraped."""

    def __init__(self, name: str, help_text: str, kind: str, read: ProcessReader) -> None:
        self.name = name
        self.help = help_text
        self.kind = kind
        self._read = read

    def samples(self) -> Iterable[str]:
        value = self._read()
        if value is not None:
            suffix = "_total" if self.kind == "counter" else ""
            yield f"{self.name}{suffix} {value!r}"


def resident_memory_bytes() -> float | None:
    try:
        status = (PROC_SELF / "status").read_text()
    except OSError:
        return None
    for line in status.splitlines():
        if line.startswith("VmRSS:"):
            return float(int(line.split()[1]) * 1024)
    return None


def cpu_seconds() -> float | None:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def open_fds() -> float | None:
    try:
        return float(len(os.listdir(PROC_SELF / "fd")))
    except OSError:
        return None


@functools.cache
def start_time_seconds() -> float | None:
    # Fixed for the life of the process: read /proc once, not on every scrape.
    try:
        fields = (PROC_SELF / "stat").read_text().rsplit(")", 1)[1].split()
        uptime = float(Path("/proc/uptime").read_text().split()[0])
    except (OSError, IndexError, ValueError):
        return None
    # Field 22 of stat (index 19 after the command name) is the start in ticks since boot.
    started_after_boot = int(fields[19]) / _CLOCK_TICKS
    return time.time() - uptime + started_after_boot


PROCESS_METRICS: tuple[ProcessMetric, ...] = (
    ProcessMetric(
        "process_resident_memory_bytes",
        "Resident memory size in bytes.",
        "gauge",
        resident_memory_bytes,
    ),
    ProcessMetric(
        "process_cpu_seconds",
        "User and system CPU time spent in seconds.",
        "counter",
        cpu_seconds,
    ),
    ProcessMetric("process_open_fds", "Number of open file descriptors.", "gauge", open_fds),
    ProcessMetric(
        "process_start_time_seconds",
        "Start time of the process since the Unix epoch.",
        "gauge",
        start_time_seconds,
    ),
)
