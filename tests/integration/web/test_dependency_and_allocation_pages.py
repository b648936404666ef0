"""The submit forms' "start after" choice and allocation warning, and a project's allocation
page, on the in-memory scheduler."""

from __future__ import annotations

import html
import re
from datetime import timedelta

import httpx
import pytest
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.job_templates import choices
from app.models.allocations import ProjectAllocation
from app.models.base import utc_now
from app.models.usage import UsageDaily
from app.scheduler.fake import FakeScheduler
from app.scheduler.registry import SchedulerRegistry
from app.scheduler.types import JobSpec
from tests.factories import fake_registry, make_job
from tests.integration.web.conftest import sign_in
from tests.world import World

Maker = async_sessionmaker[AsyncSession]
SCRIPT = "#!/bin/bash\n#SBATCH --time=60\n#SBATCH --cpus-per-task=2\ntrue\n"


@pytest.fixture
def fake() -> FakeScheduler:
    choices._cache.clear()
    return FakeScheduler(accounts={"carol": ["physics"]})


@pytest.fixture
def registry(fake: FakeScheduler) -> SchedulerRegistry:
    return fake_registry(fake)


def words(page: httpx.Response) -> str:
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", page.text)).split())


async def _physics_has(sessionmaker: Maker, world: World, allocation: int, used: int) -> None:
    async with sessionmaker() as session:
        session.add(ProjectAllocation(project_id=world.physics.id, cpu_minutes=allocation))
        session.add(
            UsageDaily(
                cluster=world.physics.cluster,
                account="physics",
                user_name="carol",
                partition="debug",
                day=utc_now().date() - timedelta(days=1),
                cpu_seconds=used * 60,
            )
        )
        await session.commit()


async def test_the_script_form_offers_own_jobs_to_wait_for_and_sends_the_dependency(
    client: httpx.AsyncClient, session: AsyncSession, people: World, fake: FakeScheduler
) -> None:
    earlier = await fake.submit(JobSpec(script=SCRIPT, account="physics"), "carol")
    mine = await make_job(session, people.carol, people.physics, slurm_job_id=earlier, name="prep")
    await make_job(session, people.alice, people.physics, slurm_job_id="42", name="theirs")
    await session.commit()
    csrf = await sign_in(client, "carol")
    shown = words(await client.get("/submit/script"))
    assert f"prep (job {earlier} on testcluster, pending)" in shown and "theirs" not in shown
    form = {
        "csrf_token": csrf,
        "project_id": str(people.physics.id),
        "script": SCRIPT,
        "after_jobs": str(mine.id),
        "after_kind": "afterany",
    }
    sent = await client.post("/submit/script", data=form)
    assert sent.status_code == 303, sent.text
    assert fake.specs[max(fake.specs)].dependency == f"afterany:{earlier}"


async def test_a_request_bigger_than_the_allocation_left_is_warned_before_it_is_sent(
    client: httpx.AsyncClient, sessionmaker: Maker, people: World
) -> None:
    await _physics_has(sessionmaker, people, allocation=1_000, used=950)
    csrf = await sign_in(client, "carol")
    form = {"csrf_token": csrf, "project_id": str(people.physics.id), "script": SCRIPT}
    checked = words(await client.post("/submit/script/preflight", data=form))
    assert (
        "This job may use up to 120 CPU minutes, but project physics has only 50 left of its "
        "allocation of 1,000: Slurm may keep it waiting or stop it once the allocation is used "
        "up. Ask for less time or fewer CPUs, or ask a manager for more."
    ) in checked


async def test_the_allocation_page_shows_the_burndown_and_when_it_runs_out(
    client: httpx.AsyncClient, sessionmaker: Maker, people: World
) -> None:
    await _physics_has(sessionmaker, people, allocation=1_000, used=700)
    await sign_in(client, "carol")
    page = await client.get(f"/projects/{people.physics.id}/allocation")
    shown = words(page)
    runs_out = (utc_now().date() + timedelta(days=3)).isoformat()
    assert (
        "700 of 1,000 CPU minutes used; at the current rate of 100 a day it runs out on "
        f"{runs_out}." in shown
    )
    assert (
        "entered by an administrator" in shown and 'class="usage-chart burndown-chart"' in page.text
    )
    assert "Enter an allocation" not in shown  # carol is no administrator


async def test_the_dashboard_lists_my_projects_with_their_allocation_and_links_each(
    client: httpx.AsyncClient, sessionmaker: Maker, people: World
) -> None:
    await _physics_has(sessionmaker, people, allocation=1000, used=950)
    await sign_in(client, "carol")
    page = await client.get("/dashboard")
    assert page.status_code == 200
    panel = page.text.split('id="projects-heading"')[1].split("</section>")[0]
    assert f'href="/projects/{people.physics.id}/allocation"' in panel
    assert 'value="0.95"' in panel
    said = words(httpx.Response(200, text=panel))
    assert "physics (testcluster) 950 of 1,000 CPU minutes used" in said
    assert "chemistry" not in said  # carol is not a member of it
    await sign_in(client, "dave")
    theirs = words(await client.get("/dashboard"))
    assert "chemistry (testcluster) 0 CPU minutes used; this project has no allocation." in theirs
