"""SIGKILL the web process (poller inside) in the middle of 200 concurrent API submissions.

Every answered submission must be exactly one Slurm job and one portal row; after the
restarted portal's poller has passed the submit grace (60 s in production, ADR 0002; 15 s for
the restarted portal here, whose own submits are none), no row is left
``submitting``: each is attached to its Slurm job, found by UUID, or ``submit_failed``
because no Slurm job carries its UUID. Nothing lost, nothing duplicated.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

import httpx
import pytest
from sqlalchemy import text

from app.db import create_engine
from tests.faults.conftest import cancel_slurm_jobs, cancel_slurm_jobs_named, slurm_jobs_by_comment
from tests.portal import PortalProcess

pytestmark = [pytest.mark.slurm, pytest.mark.slow]
SUBMITS = 200
# Every submission is in flight at once: a submit holds no pooled connection while the
# cluster is called, so the pool is no limit.
IN_FLIGHT = SUBMITS
KILL_AFTER_ACCEPTED = 50
SETTLE_SECONDS = 180.0
ACCOUNTING_LAG_SECONDS = 60.0


@dataclass
class Outcome:
    accepted: dict[str, str] = field(default_factory=dict)  # portal UUID -> name
    refused: int = 0
    statuses: dict[int, int] = field(default_factory=dict)
    first_body: dict[int, str] = field(default_factory=dict)  # per status, to explain it
    killed: asyncio.Event = field(default_factory=asyncio.Event)


async def _submit_one(
    client: httpx.AsyncClient, body: dict[str, object], outcome: Outcome, portal: PortalProcess
) -> None:
    headers = {"Idempotency-Key": uuid.uuid4().hex}
    try:
        response = await client.post("/api/v1/jobs", json=body, headers=headers)
    except httpx.HTTPError:
        outcome.refused += 1
        return
    outcome.statuses[response.status_code] = outcome.statuses.get(response.status_code, 0) + 1
    outcome.first_body.setdefault(response.status_code, response.text[:500])
    if response.status_code != 201:
        outcome.refused += 1
        return
    outcome.accepted[response.json()["uuid"]] = str(body["name"])
    if len(outcome.accepted) == KILL_AFTER_ACCEPTED and not outcome.killed.is_set():
        outcome.killed.set()
        portal.kill()


async def _storm(portal: PortalProcess, token: str, project_id: int, run: str) -> Outcome:
    outcome = Outcome()
    limit = asyncio.Semaphore(IN_FLIGHT)
    headers = {"Authorization": f"Bearer {token}"}
    async with httpx.AsyncClient(base_url=portal.base_url, headers=headers, timeout=60) as client:

        async def bounded(index: int) -> None:
            body = {
                "script": "#!/bin/bash\ntrue\n",
                "name": f"k9-{run}-{index}",
                "project_id": project_id,
                "time_limit_minutes": 1,
            }
            async with limit:
                await _submit_one(client, body, outcome, portal)

        await asyncio.gather(*(bounded(i) for i in range(SUBMITS)))
    return outcome


async def _rows(database_url: str, run: str) -> dict[str, tuple[str, str | None]]:
    engine = create_engine(database_url)
    try:
        async with engine.connect() as conn:
            found = await conn.execute(
                text("SELECT uuid, state, slurm_job_id FROM jobs WHERE name LIKE :p"),
                {"p": f"k9-{run}-%"},
            )
            return {row.uuid: (row.state, row.slurm_job_id) for row in found}
    finally:
        await engine.dispose()


async def _settled_rows(database_url: str, run: str) -> dict[str, tuple[str, str | None]]:
    deadline = asyncio.get_running_loop().time() + SETTLE_SECONDS
    while True:
        rows = await _rows(database_url, run)
        if all(state != "submitting" for state, _ in rows.values()):
            return rows
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"rows still submitting after {SETTLE_SECONDS:.0f} s")
        await asyncio.sleep(2)


def _accounting_caught_up(
    rows: dict[str, tuple[str, str | None]], since: datetime
) -> dict[str, list[str]]:
    """sacct once slurmdbd has recorded every attached job (it receives them asynchronously)."""
    attached = {uid for uid, (_, slurm_id) in rows.items() if slurm_id}
    deadline = time.monotonic() + ACCOUNTING_LAG_SECONDS
    while True:
        found = slurm_jobs_by_comment(since)
        if attached <= set(found) or time.monotonic() > deadline:
            return found
        time.sleep(1)


def test_killed_web_process_loses_and_duplicates_no_submission(
    portal: PortalProcess, alice_token: tuple[str, int]
) -> None:
    token, project_id = alice_token
    run = uuid.uuid4().hex[:8]
    since = datetime.now(UTC) - timedelta(minutes=1)
    slurm_ids: list[str] = []
    try:
        outcome = asyncio.run(_storm(portal, token, project_id, run))
        assert outcome.killed.is_set(), "the portal was never killed"
        # An exhausted connection pool shows as 500s once the pool timeout passes.
        assert outcome.statuses.get(500, 0) == 0, (outcome.first_body, portal.errors())
        # No sbatch of the killed process can still be on its way: the restarted poller may
        # look for the rows' UUIDs sooner than production's minute.
        portal.env["PORTAL_SUBMIT_GRACE"] = "15"
        portal.start()
        rows = asyncio.run(_settled_rows(portal.database_url, run))
        by_comment = _accounting_caught_up(rows, since)
        slurm_ids = [j for uid in rows for j in by_comment.get(uid, [])]
        duplicates = {uid: by_comment[uid] for uid in rows if len(by_comment.get(uid, [])) > 1}
        assert duplicates == {}
        for uid in outcome.accepted:
            assert uid in rows, "an accepted submission has no portal row"
            assert len(by_comment.get(uid, [])) == 1, "an accepted submission is not one Slurm job"
        for uid, (state, slurm_id) in rows.items():
            jobs = by_comment.get(uid, [])
            if state == "submit_failed":
                assert jobs == [], f"{uid} is submit_failed but Slurm ran it"
            else:
                assert jobs == [slurm_id], f"{uid} is attached to {slurm_id}, Slurm has {jobs}"
        print(
            f"\nsubmits={SUBMITS} in_flight={IN_FLIGHT} accepted={len(outcome.accepted)} "
            f"refused={outcome.refused} statuses={outcome.statuses} first={outcome.first_body} "
            f"rows={len(rows)} slurm_jobs={len(slurm_ids)} "
            f"failed={sum(s == 'submit_failed' for s, _ in rows.values())} duplicates=0 lost=0"
        )
    finally:
        cancel_slurm_jobs(slurm_ids)
        cancel_slurm_jobs_named(f"k9-{run}-")
