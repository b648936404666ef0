from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
import pytest
from sqlalchemy.ext.asyncio import AsyncSession

from app.cli.client import SseEvent, parse_sse
from tests.integration.api.conftest import issue_token
from tests.world import World

pytestmark = pytest.mark.slurm
LINES = [f"line {i}\n" for i in range(1, 7)]
OUTPUT = "".join(LINES)
SCRIPT = '#!/bin/bash\nfor i in $(seq 1 6); do echo "line $i"; sleep 0.5; done\n'
DEADLINE = 120.0


async def _submit(client: httpx.AsyncClient, headers: dict[str, str], world: World) -> int:
    body = {"script": SCRIPT, "name": "lines", "project_id": world.physics.id}
    body |= {"time_limit_minutes": 2}
    response = await client.post("/api/v1/jobs", json=body, headers=headers)
    assert response.status_code == 201, response.text
    job_id: int = response.json()["id"]
    return job_id


async def _wait_until_finished(
    client: httpx.AsyncClient, headers: dict[str, str], job_id: int
) -> dict[str, Any]:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + DEADLINE
    while loop.time() < deadline:
        job: dict[str, Any] = (await client.get(f"/api/v1/jobs/{job_id}", headers=headers)).json()
        if job["is_finished"]:
            return job
        await asyncio.sleep(0.5)
    await client.post(f"/api/v1/jobs/{job_id}/cancel", headers=headers)
    pytest.fail(f"job {job_id} did not finish within {DEADLINE} s")


async def _events(client: httpx.AsyncClient, path: str, headers: dict[str, str]) -> list[SseEvent]:
    async with asyncio.timeout(DEADLINE):
        response = await client.get(path, headers=headers)
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("text/event-stream")
    return list(parse_sse(iter(response.text.splitlines())))


def _text(events: list[SseEvent]) -> str:
    return "".join(json.loads(e.data)["data"] for e in events if e.event == "log")


async def test_log_pages_by_byte_offset_until_eof(
    cluster_client: httpx.AsyncClient, session: AsyncSession, world: World
) -> None:
    headers = await issue_token(session, world.carol)
    job_id = await _submit(cluster_client, headers, world)
    job = await _wait_until_finished(cluster_client, headers, job_id)
    assert job["state"] == "completed"
    path = f"/api/v1/jobs/{job_id}/logs/stdout"
    response = await cluster_client.get(f"{path}?offset=0&limit=10", headers=headers)
    assert response.status_code == 200, response.text
    first = response.json()
    assert (first["data"], first["next_offset"], first["eof"]) == (OUTPUT[:10], 10, False)
    rest = (await cluster_client.get(f"{path}?offset=10", headers=headers)).json()
    assert rest["data"] == OUTPUT[10:]
    assert (rest["next_offset"], rest["size"], rest["eof"]) == (len(OUTPUT), len(OUTPUT), True)
    past = (await cluster_client.get(f"{path}?offset={len(OUTPUT)}", headers=headers)).json()
    assert (past["data"], past["eof"]) == ("", True)


async def test_follow_sends_byte_offset_ids_and_resumes_from_last_event_id(
    cluster_client: httpx.AsyncClient, session: AsyncSession, world: World
) -> None:
    headers = await issue_token(session, world.carol)
    job_id = await _submit(cluster_client, headers, world)
    path = f"/api/v1/jobs/{job_id}/logs/stdout/follow"
    try:
        events = await _events(cluster_client, path, headers)
    finally:
        await _wait_until_finished(cluster_client, headers, job_id)
    logs = [e for e in events if e.event == "log"]
    assert _text(logs) == OUTPUT
    sent = 0
    for event in logs:
        sent += len(json.loads(event.data)["data"].encode())
        assert event.id == str(sent)
    assert events[-1].event == "end"
    resume_from = logs[0].id
    assert resume_from is not None
    resumed = await _events(cluster_client, path, {**headers, "Last-Event-ID": resume_from})
    assert _text(logs[:1]) + _text(resumed) == OUTPUT
    assert resumed[-1].event == "end"


async def test_bad_last_event_id_is_400(
    cluster_client: httpx.AsyncClient, session: AsyncSession, world: World
) -> None:
    headers = {**await issue_token(session, world.carol), "Last-Event-ID": "abc"}
    job_id = await _submit(cluster_client, headers, world)
    try:
        response = await cluster_client.get(
            f"/api/v1/jobs/{job_id}/logs/stdout/follow", headers=headers
        )
        assert response.status_code == 400
    finally:
        await cluster_client.post(f"/api/v1/jobs/{job_id}/cancel", headers=headers)
