"""Request ids, JSON log lines and the metrics page, including hostile request ids."""

from __future__ import annotations

import json
import logging

import httpx
import pytest

from app.observability.logs import JsonFormatter


async def test_request_id_is_echoed_and_generated_when_absent(client: httpx.AsyncClient) -> None:
    given = await client.get("/healthz", headers={"X-Request-ID": "abc-123"})
    fresh = await client.get("/healthz")
    assert given.headers["X-Request-ID"] == "abc-123"
    assert len(fresh.headers["X-Request-ID"]) == 32


@pytest.mark.parametrize("hostile", ["a\r\nSet-Cookie: x=1", "x" * 500, "id with spaces", "é"])
async def test_hostile_request_id_is_replaced_not_reflected(
    client: httpx.AsyncClient, hostile: str
) -> None:
    response = await client.get("/healthz", headers={"X-Request-ID": hostile.encode("utf-8")})
    assert response.headers["X-Request-ID"] != hostile
    assert "set-cookie" not in {name.lower() for name in response.headers}


async def test_access_log_is_one_json_line_with_request_fields(
    client: httpx.AsyncClient, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="app.access")
    await client.get("/jobs/123456", headers={"X-Request-ID": "req-42"})
    record = next(r for r in caplog.records if r.name == "app.access")
    line = json.loads(JsonFormatter().format(record))
    assert line["request_id"] == "req-42"
    assert line["method"] == "GET"
    assert line["path"] == "/jobs/123456"
    assert line["status"] in (303, 401, 404)
    assert line["duration_ms"] >= 0
    assert {"time", "level", "logger", "message"} <= set(line)


async def test_metrics_count_requests_by_route_template_not_by_id(
    client: httpx.AsyncClient,
) -> None:
    for job_id in (1, 2, 3):
        await client.get(f"/api/v1/jobs/{job_id}")
    page = await client.get("/metrics")
    assert page.status_code == 200
    assert page.headers["content-type"].startswith("text/plain")
    text = page.text
    assert 'route="/api/v1/jobs/{job_id}",status="401"' in text
    assert '/api/v1/jobs/1"' not in text
    assert "# TYPE portal_http_request_duration_seconds histogram" in text
    for name in ("portal_scheduler_calls", "portal_poll_cycles", "portal_submits"):
        assert f"# TYPE {name}_total counter" in text
