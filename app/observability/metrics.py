"""The portal's Prometheus metrics, kept by prometheus_client.

Each web worker (``uvicorn --workers N``) and each poller is its own process. With
``PROMETHEUS_MULTIPROC_DIR`` set to an empty directory shared by a host's processes (the
README's run command and the image set it), every process writes its figures there and one
scrape answers for all of them, whichever worker takes it; without it each process answers
for itself. The process's own ``process_*`` figures (``app.observability.process``) always
describe the process that answered.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from typing import Protocol

import prometheus_client
from prometheus_client import CollectorRegistry, generate_latest, multiprocess

MULTIPROCESS_DIR_VARIABLE = "PROMETHEUS_MULTIPROC_DIR"
DEFAULT_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)

# ``*_created`` series double every counter and histogram and no dashboard reads them.
prometheus_client.disable_created_metrics()  # type: ignore[no-untyped-call]
REGISTRY = CollectorRegistry(auto_describe=True)


class Counter:
    """A monotonically increasing count per label set."""

    def __init__(
        self,
        name: str,
        help_text: str,
        labels: Sequence[str] = (),
        registry: CollectorRegistry = REGISTRY,
    ) -> None:
        self._metric = prometheus_client.Counter(name, help_text, labels, registry=registry)
        self._labelled = bool(labels)

    def inc(self, *labels: str, amount: float = 1.0) -> None:
        (self._metric.labels(*labels) if self._labelled else self._metric).inc(amount)


class Gauge:
    """A value per label set that goes up and down; per live process when several run."""

    def __init__(
        self,
        name: str,
        help_text: str,
        labels: Sequence[str] = (),
        registry: CollectorRegistry = REGISTRY,
    ) -> None:
        self._metric = prometheus_client.Gauge(
            name, help_text, labels, registry=registry, multiprocess_mode="liveall"
        )
        self._labelled = bool(labels)

    def set(self, value: float, *labels: str) -> None:
        (self._metric.labels(*labels) if self._labelled else self._metric).set(value)


class Histogram:
    """Observations counted into cumulative buckets, with their sum and count."""

    def __init__(
        self,
        name: str,
        help_text: str,
        labels: Sequence[str] = (),
        buckets: Sequence[float] = DEFAULT_BUCKETS,
        registry: CollectorRegistry = REGISTRY,
    ) -> None:
        self._metric = prometheus_client.Histogram(
            name, help_text, labels, registry=registry, buckets=buckets
        )
        self._labelled = bool(labels)

    def observe(self, value: float, *labels: str) -> None:
        (self._metric.labels(*labels) if self._labelled else self._metric).observe(value)


class TextMetric(Protocol):
    """A family written out by hand (the process figures, read when scraped)."""

    name: str
    help: str
    kind: str

    def samples(self) -> Iterable[str]: ...


def exposition(metrics: Iterable[TextMetric]) -> str:
    """Hand-written families in the text format Prometheus scrapes."""
    lines: list[str] = []
    for metric in metrics:
        # In format 0.0.4 a counter's family carries the ``_total`` its samples carry.
        family = f"{metric.name}_total" if metric.kind == "counter" else metric.name
        lines.append(f"# HELP {family} {metric.help}")
        lines.append(f"# TYPE {family} {metric.kind}")
        lines.extend(metric.samples())
    return "\n".join(lines) + "\n"


def registry_text(registry: CollectorRegistry = REGISTRY) -> str:
    """The portal's metrics: every process's on a host sharing a multiprocess directory."""
    if os.environ.get(MULTIPROCESS_DIR_VARIABLE):
        gathered = CollectorRegistry()
        multiprocess.MultiProcessCollector(gathered)  # type: ignore[no-untyped-call]
        return generate_latest(gathered).decode()
    return generate_latest(registry).decode()


def forget_process(pid: int) -> None:
    """Drop a process's live gauges once it has exited (its counters are kept)."""
    if os.environ.get(MULTIPROCESS_DIR_VARIABLE):
        multiprocess.mark_process_dead(pid)  # type: ignore[no-untyped-call]


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
BACKGROUND_TASK_CRASHES = Counter(
    "portal_background_task_crashes",
    "Failures of a background task (a cluster's poller, the notification dispatcher, one "
    "notification's delivery), each contained, logged and retried.",
    ("task",),
)
BACKGROUND_TASK_RUNNING = Gauge(
    "portal_background_task_running",
    "1 while this process runs the background task, 0 while it waits to start it again.",
    ("task",),
)
