"""A small Prometheus registry written for the portal's few metrics (text format 0.0.4).

Counters, gauges and histograms, with labels; values live in process memory, so every web
replica and poller exposes its own series and Prometheus sums them.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Iterable, Sequence
from typing import Protocol

LabelValues = tuple[str, ...]
DEFAULT_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def _labels(names: Sequence[str], values: Sequence[str], extra: str = "") -> str:
    parts = [f'{name}="{_escape(value)}"' for name, value in zip(names, values, strict=True)]
    if extra:
        parts.append(extra)
    return "{" + ",".join(parts) + "}" if parts else ""


def _number(value: float) -> str:
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    return repr(float(value))


class _SingleValue:
    """One number per label set; subclasses say how it changes."""

    kind = "untyped"
    suffix = ""

    def __init__(self, name: str, help_text: str, labels: Sequence[str] = ()) -> None:
        self.name = name
        self.help = help_text
        self.label_names = tuple(labels)
        self._values: dict[LabelValues, float] = {}
        self._lock = threading.Lock()

    def value(self, *labels: str) -> float:
        return self._values.get(labels, 0.0)

    def samples(self) -> Iterable[str]:
        with self._lock:
            items = sorted(self._values.items())
        for labels, value in items:
            text_labels = _labels(self.label_names, labels)
            yield f"{self.name}{self.suffix}{text_labels} {_number(value)}"


class Counter(_SingleValue):
    """A monotonically increasing count per label set."""

    kind = "counter"
    suffix = "_total"

    def inc(self, *labels: str, amount: float = 1.0) -> None:
        with self._lock:
            self._values[labels] = self._values.get(labels, 0.0) + amount


class Gauge(_SingleValue):
    """A value per label set that goes up and down (set, not incremented)."""

    kind = "gauge"

    def set(self, value: float, *labels: str) -> None:
        with self._lock:
            self._values[labels] = value


class Histogram:
    """Observations counted into cumulative buckets, with their sum and count."""

    kind = "histogram"

    def __init__(
        self,
        name: str,
        help_text: str,
        labels: Sequence[str] = (),
        buckets: Sequence[float] = DEFAULT_BUCKETS,
    ) -> None:
        self.name = name
        self.help = help_text
        self.label_names = tuple(labels)
        self.bounds = (*sorted(buckets), math.inf)
        self._series: dict[LabelValues, list[float]] = {}
        self._lock = threading.Lock()

    def observe(self, value: float, *labels: str) -> None:
        with self._lock:
            # Per series: one slot per bucket, then the sum.
            series = self._series.setdefault(labels, [0.0] * (len(self.bounds) + 1))
            for index, bound in enumerate(self.bounds):
                if value <= bound:
                    series[index] += 1
            series[-1] += value

    def count(self, *labels: str) -> float:
        series = self._series.get(labels)
        return series[-2] if series else 0.0

    def samples(self) -> Iterable[str]:
        with self._lock:
            items = sorted((key, list(values)) for key, values in self._series.items())
        for labels, series in items:
            for bound, count in zip(self.bounds, series, strict=False):
                le = f'le="{_number(bound)}"'
                yield f"{self.name}_bucket{_labels(self.label_names, labels, le)} {_number(count)}"
            text_labels = _labels(self.label_names, labels)
            yield f"{self.name}_sum{text_labels} {_number(series[-1])}"
            yield f"{self.name}_count{text_labels} {_number(series[-2])}"


class Metric(Protocol):
    name: str
    help: str
    kind: str

    def samples(self) -> Iterable[str]: ...


def exposition(metrics: Iterable[Metric]) -> str:
    """The text format Prometheus scrapes."""
    lines: list[str] = []
    for metric in metrics:
        # In format 0.0.4 a counter's family carries the ``_total`` its samples carry.
        family = f"{metric.name}_total" if metric.kind == "counter" else metric.name
        lines.append(f"# HELP {family} {metric.help}")
        lines.append(f"# TYPE {family} {metric.kind}")
        lines.extend(metric.samples())
    return "\n".join(lines) + "\n"


HTTP_REQUESTS = Counter(
    "portal_http_requests",
    "HTTP requests by method, route template and status.",
    ("method", "route", "status"),
)
HTTP_LATENCY = Histogram(
    "portal_http_request_duration_seconds", "Time to answer an HTTP request.", ("method", "route")
)
SCHEDULER_CALLS = Counter(
    "portal_scheduler_calls",
    "Calls to a cluster's scheduler by kind and outcome.",
    ("cluster", "kind", "outcome"),
)
SCHEDULER_LATENCY = Histogram(
    "portal_scheduler_call_duration_seconds", "Duration of scheduler calls.", ("cluster", "kind")
)
POLL_CYCLES = Counter(
    "portal_poll_cycles", "Poll cycles by cluster and outcome.", ("cluster", "outcome")
)
POLL_CYCLE_DURATION = Histogram(
    "portal_poll_cycle_duration_seconds", "Duration of one poll cycle.", ("cluster",)
)
POLL_TRANSITIONS = Counter(
    "portal_poll_transitions", "Job state changes the poller wrote.", ("cluster",)
)
POLLER_LEASE_HELD = Gauge(
    "portal_poller_lease_held",
    "1 while this process holds the cluster's poll lease (is the active poller), else 0.",
    ("cluster",),
)
SUBMITS = Counter(
    "portal_submits",
    "Submissions sent to a scheduler by outcome (accepted, rejected, failed).",
    ("cluster", "outcome"),
)
ALL_METRICS: tuple[Metric, ...] = (
    HTTP_REQUESTS,
    HTTP_LATENCY,
    SCHEDULER_CALLS,
    SCHEDULER_LATENCY,
    POLL_CYCLES,
    POLL_CYCLE_DURATION,
    POLL_TRANSITIONS,
    POLLER_LEASE_HELD,
    SUBMITS,
)
