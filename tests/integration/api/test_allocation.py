"""A project's allocation in the API: entered by an administrator, its burn-down, and a
submission checked against what is left before it is sent."""

from __future__ import annotations

from datetime import timedelta

import httpx
from sqlalchemy.ext.asyncio import AsyncSession

from app.models.base import utc_now
from app.models.usage import UsageDaily
from app.scheduler.fake import FakeScheduler
from tests.integration.api.conftest import issue_token
from tests.world import World

BIG = "#!/bin/bash\n#SBATCH --time=60\n#SBATCH --cpus-per-task=2\ntrue\n"


async def test_allocation_entered_burned_and_checked_before_submitting(
    client: httpx.AsyncClient, session: AsyncSession, world: World, scheduler: FakeScheduler
) -> None:
    session.add(
        UsageDaily(
            cluster=world.physics.cluster,
            account="physics",
            user_name="carol",
            partition="debug",
            day=utc_now().date() - timedelta(days=1),
            cpu_seconds=950 * 60,
        )
    )
    await session.commit()
    carol = await issue_token(session, world.carol)
    admin = await issue_token(session, world.admin, ("submit", "admin"))
    path = f"/api/v1/projects/{world.physics.id}/allocation"
    refused = await client.put(path, json={"cpu_minutes": 1000}, headers=carol)
    assert refused.status_code == 403
    entered = await client.put(path, json={"cpu_minutes": 1000}, headers=admin)
    assert entered.status_code == 200, entered.text
    found = (await client.get(path, headers=carol)).json()
    assert (found["allocation_cpu_minutes"], found["source"]) == (1000, "administrator")
    assert (found["used_cpu_minutes"], found["remaining_cpu_minutes"]) == (950, 50)
    runs_out = utc_now().date() + timedelta(days=int(50 // (950 / 7)))
    assert found["runs_out_on"] == runs_out.isoformat()
    body = {"script": BIG, "project_id": world.physics.id}
    checked = await client.post("/api/v1/jobs/allocation-check", json=body, headers=carol)
    assert checked.json() == {
        "fits": False,
        "requested_cpu_minutes": 120,
        "warning": "This job may use up to 120 CPU minutes, but project physics has only 50 "
        "left of its allocation of 1,000: Slurm may keep it waiting or stop it once the "
        "allocation is used up. Ask for less time or fewer CPUs, or ask a manager for more.",
    }
    assert "submit" not in scheduler.calls
    # The general check says the same among its warnings, and submits nothing either.
    general = await client.post("/api/v1/jobs/check", json=body, headers=carol)
    assert general.status_code == 200, general.text
    [warning] = [w for w in general.json()["warnings"] if w["code"] == "allocation"]
    assert warning["message"] == checked.json()["warning"]
    assert warning["requested_cpu_minutes"] == 120
    assert "submit" not in scheduler.calls


async def test_checks_refuse_a_bad_array_range_as_a_submission_would(
    client: httpx.AsyncClient, session: AsyncSession, world: World, scheduler: FakeScheduler
) -> None:
    carol = await issue_token(session, world.carol)
    script = "#!/bin/bash\n#SBATCH --time=10\n#SBATCH --array=10-1\ntrue\n"
    body = {"script": script, "project_id": world.physics.id}
    submitted = await client.post("/api/v1/jobs", json=body, headers=carol)
    assert submitted.status_code == 422, submitted.text
    for path in ("/api/v1/jobs/check", "/api/v1/jobs/allocation-check"):
        checked = await client.post(path, json=body, headers=carol)
        assert checked.status_code == 422, (path, checked.text)
        assert checked.json() == submitted.json()
        assert "10-1 counts down; write the smaller number first (1-10)" in checked.text
    assert "submit" not in scheduler.calls
