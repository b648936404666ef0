"""The script of a job submitted outside the portal is read from Slurm, as its owner, once."""

from __future__ import annotations

import httpx
from sqlalchemy.ext.asyncio import AsyncSession

from app.models.jobs import Job
from app.scheduler.fake import FakeScheduler
from app.scheduler.types import JobSpec
from tests.factories import make_job
from tests.integration.api.conftest import issue_token
from tests.world import World

BY_HAND = "#!/bin/bash\n#SBATCH --time=5\necho 'by hand' $1\n"


async def _outside_job(session: AsyncSession, world: World, scheduler: FakeScheduler) -> Job:
    slurm_id = await scheduler.submit(JobSpec(script=BY_HAND, account="physics"), "carol")
    job = await make_job(
        session,
        world.carol,
        world.physics,
        slurm_job_id=slurm_id,
        script="",
        submitted_outside=True,
    )
    await session.commit()
    return job


async def test_a_script_slurm_keeps_is_shown_to_those_who_see_the_job_and_kept(
    client: httpx.AsyncClient, session: AsyncSession, world: World, scheduler: FakeScheduler
) -> None:
    job = await _outside_job(session, world, scheduler)
    carol = await issue_token(session, world.carol, ("read",))
    alice = await issue_token(session, world.alice, ("read",))  # manager of the project
    bob = await issue_token(session, world.bob, ("read",))

    first = await client.get(f"/api/v1/jobs/{job.id}/script", headers=alice)
    scheduler.is_up = False  # kept: no second question to the cluster
    again = await client.get(f"/api/v1/jobs/{job.id}/script", headers=carol)
    stranger = await client.get(f"/api/v1/jobs/{job.id}/script", headers=bob)

    assert first.json() == {"script": BY_HAND, "source": "slurm"}
    assert again.json() == {"script": BY_HAND, "source": "slurm"}
    assert scheduler.calls.count("batch_script") == 1
    assert stranger.status_code == 404


async def test_a_script_slurm_forgot_is_said_to_be_gone_and_a_portal_script_is_the_portals(
    client: httpx.AsyncClient, session: AsyncSession, world: World, scheduler: FakeScheduler
) -> None:
    forgotten = await make_job(
        session, world.carol, world.physics, slurm_job_id="77", script="", submitted_outside=True
    )
    ours = await make_job(session, world.carol, world.physics, slurm_job_id="78")
    await session.commit()
    headers = await issue_token(session, world.carol, ("read",))

    gone = await client.get(f"/api/v1/jobs/{forgotten.id}/script", headers=headers)
    portal = await client.get(f"/api/v1/jobs/{ours.id}/script", headers=headers)

    assert gone.json() == {"script": "", "source": "gone"}
    assert portal.json() == {"script": ours.script, "source": "portal"}
    assert scheduler.calls.count("batch_script") == 1  # the portal's own copy needs no call
