"""The standalone poller's metrics listener, gauges and the process's own figures."""

from __future__ import annotations

import asyncio
import time

import httpx
import pytest
from prometheus_client import CollectorRegistry

from app.observability.metrics import Counter, Gauge, exposition, registry_text
from app.observability.process import (
    PROCESS_METRICS,
    open_fds,
    resident_memory_bytes,
    start_time_seconds,
)
from app.observability.serve import answer, start_metrics_server


def test_gauge_keeps_the_last_value_per_label_set() -> None:
    registry = CollectorRegistry()
    gauge = Gauge("t_lease", "help", ("cluster",), registry=registry)
    gauge.set(1, "a")
    gauge.set(0, "a")
    gauge.set(1, "b")
    text = registry_text(registry)
    assert "# TYPE t_lease gauge" in text
    assert 't_lease{cluster="a"} 0.0' in text
    assert 't_lease{cluster="b"} 1.0' in text


def test_counter_family_and_samples_share_the_total_suffix() -> None:
    registry = CollectorRegistry()
    counter = Counter("t_calls", "help", ("kind",), registry=registry)
    counter.inc("queue")
    lines = registry_text(registry).splitlines()
    assert lines[:2] == ["# HELP t_calls_total help", "# TYPE t_calls_total counter"]
    assert lines[2] == 't_calls_total{kind="queue"} 1.0'


def test_process_figures_describe_this_process() -> None:
    rss = resident_memory_bytes()
    assert rss is not None and rss > 1_000_000
    fds = open_fds()
    assert fds is not None and fds >= 3
    started = start_time_seconds()
    assert started is not None
    # This test process started before now, and not days ago.
    assert time.time() - 6 * 3600 < started <= time.time() + 1
    text = exposition(PROCESS_METRICS)
    assert "# TYPE process_cpu_seconds_total counter" in text
    assert "\nprocess_cpu_seconds_total " in text
    assert "\nprocess_resident_memory_bytes " in text


@pytest.mark.parametrize(
    ("request_line", "status"),
    [
        ("GET /metrics HTTP/1.1", b"200 OK"),
        ("GET /metrics?x=1 HTTP/1.0", b"200 OK"),
        ("GET /healthz HTTP/1.1", b"200 OK"),
        ("POST /metrics HTTP/1.1", b"405 Method Not Allowed"),
        ("GET /../etc/passwd HTTP/1.1", b"404 Not Found"),
        ("GET /metrics", b"400 Bad Request"),
        ("\x00\x01 garbage", b"400 Bad Request"),
    ],
)
def test_answers_only_the_two_paths(request_line: str, status: bytes) -> None:
    assert answer(request_line).startswith(b"HTTP/1.1 " + status)


def test_head_gets_headers_without_a_body() -> None:
    response = answer("HEAD /metrics HTTP/1.1")
    assert response.endswith(b"\r\n\r\n")
    assert b"portal_poll_cycles" not in response


async def test_listener_serves_metrics_over_tcp() -> None:
    server = await start_metrics_server("127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}") as client:
            page = await client.get("/metrics")
            missing = await client.get("/jobs")
        assert page.status_code == 200
        assert page.headers["content-type"].startswith("text/plain; version=0.0.4")
        assert "# TYPE portal_poll_cycle_duration_seconds histogram" in page.text
        assert "# TYPE portal_poller_lease_held gauge" in page.text
        assert "process_resident_memory_bytes " in page.text
        assert missing.status_code == 404
    finally:
        server.close()
        await server.wait_closed()


async def test_a_client_that_never_finishes_its_request_is_dropped() -> None:
    server = await start_metrics_server("127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(b"GET /metrics HTTP/1.1\r\n" + b"X: " + b"a" * 10_000)
        await writer.drain()
        # The listener closes the connection instead of buffering an endless header.
        assert await asyncio.wait_for(reader.read(), 10) == b""
        writer.close()
    finally:
        server.close()
        await server.wait_closed()
