"""What a job's page and its neighbours say: where Slurm ran it, values as they were typed,
why a figure is missing, one word for a project, and the API reference within reach."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from html import unescape

import httpx
import pytest
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.jobs.repository import add_event
from app.models.jobs import Job
from app.scheduler.fake import FakeScheduler
from app.scheduler.registry import SchedulerRegistry
from tests.factories import fake_registry, make_job
from tests.integration.web.conftest import sign_in
from tests.integration.web.helpers import make_template
from tests.world import World

Maker = async_sessionmaker[AsyncSession]
STARTED = datetime(2026, 11, 27, 9, 0, tzinfo=UTC)


@pytest.fixture
def fake() -> FakeScheduler:
    return FakeScheduler(accounts={"alice": ["physics"], "bob": ["chemistry"]})


@pytest.fixture
def registry(fake: FakeScheduler) -> SchedulerRegistry:
    return fake_registry(fake)


def _text(html: str) -> str:
    return unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html)))


async def _job(sessionmaker: Maker, people: World, **fields: object) -> Job:
    async with sessionmaker() as session:
        job = await make_job(session, people.alice, people.physics, **fields)  # type: ignore[arg-type]
        await session.commit()
    return job


async def test_a_finished_job_says_where_slurm_ran_it_and_why_its_cpu_figure_is_missing(
    client: httpx.AsyncClient, people: World, sessionmaker: Maker
) -> None:
    quick = await _job(
        sessionmaker,
        people,
        state="completed",
        slurm_job_id="905",
        chosen_partition="debug",
        started_at=STARTED,
        elapsed_seconds=0,
        alloc_cpus=1,
    )
    asked = await _job(sessionmaker, people, state="pending", partition="long")
    await sign_in(client, "alice")

    quick_page = _text((await client.get(f"/jobs/{quick.id}")).text)
    asked_page = _text((await client.get(f"/jobs/{asked.id}")).text)

    assert "Partition debug (the cluster's default)" in quick_page
    assert (
        "CPU efficiency not known: it ran for less than a second, too short to measure (1 CPU)"
        in quick_page
    )
    assert "Partition long" in asked_page
    assert "CPU efficiency not known: known once the job has ended" in asked_page


async def test_a_template_jobs_parameters_read_as_they_were_typed_under_their_labels(
    client: httpx.AsyncClient, people: World, sessionmaker: Maker
) -> None:
    template = await make_template(sessionmaker, people.alice, "words")
    async with sessionmaker() as session:
        job = await make_job(
            session,
            people.alice,
            people.physics,
            template_version_id=template.current_version_id,
            parameters={"message": "hi", "time_limit": 5, "partition": "debug"},
        )
        await session.commit()
    await sign_in(client, "alice")

    page = _text((await client.get(f"/jobs/{job.id}")).text)

    assert "Time limit 0:05:00" in page
    assert "time_limit 5" not in page
    assert "Message hi" in page


async def test_forms_call_a_project_a_project_and_name_it_once(
    client: httpx.AsyncClient, people: World, sessionmaker: Maker
) -> None:
    template = await make_template(sessionmaker, people.bob, "chem")
    await sign_in(client, "bob")

    form = (await client.get(f"/templates/{template.id}/submit")).text
    script = (await client.get("/submit/script")).text

    assert '<label for="account">Project <span class="required">(required)</span>' in form
    assert "The job&#39;s time is charged to this project&#39;s allocation." in form
    assert "allocation billed" not in form and ">Account" not in form
    assert ">chemistry</option>" in script and "chemistry (chemistry)" not in script


async def test_the_api_reference_is_linked_from_the_tokens_page_and_every_signed_in_footer(
    client: httpx.AsyncClient, people: World
) -> None:
    signed_out = (await client.get("/signin")).text
    await sign_in(client, "alice")

    tokens = (await client.get("/settings/tokens")).text
    dashboard = (await client.get("/dashboard")).text

    assert 'is in the <a href="/api/docs">API reference</a>' in tokens
    footer = re.search(r'<footer class="site-footer">.*?</footer>', dashboard, re.S)
    assert footer is not None and '<a href="/api/docs">API reference</a>' in footer.group(0)
    signed_out_footer = re.search(r'<footer class="site-footer">.*?</footer>', signed_out, re.S)
    assert signed_out_footer is not None and "/api/docs" not in signed_out_footer.group(0)


async def test_a_new_jobs_status_asks_every_second_then_every_three_and_when_its_output_ends(
    client: httpx.AsyncClient, people: World, sessionmaker: Maker
) -> None:
    new = await _job(sessionmaker, people, state="pending", slurm_job_id="906")
    older = await _job(
        sessionmaker,
        people,
        state="running",
        slurm_job_id="907",
        created_at=datetime.now(UTC) - timedelta(minutes=1),
    )
    await sign_in(client, "alice")

    new_status = (await client.get(f"/jobs/{new.id}/status")).text
    older_status = (await client.get(f"/jobs/{older.id}/status")).text

    assert 'hx-trigger="every 1s, job-output-ended from:body"' in new_status
    assert 'hx-trigger="every 3s, job-output-ended from:body"' in older_status
    assert '<a data-while-active class="button danger"' in older_status


async def test_a_job_its_owner_ended_says_so_to_them_and_names_them_to_others(
    client: httpx.AsyncClient, people: World, sessionmaker: Maker
) -> None:
    job = await _job(sessionmaker, people, state="cancelled", slurm_job_id="908")
    async with sessionmaker() as session:
        add_event(
            session, job.id, "running", "running", reason="cancel requested by alice", source="user"
        )
        await session.commit()

    await sign_in(client, "alice")
    own = _text((await client.get(f"/jobs/{job.id}")).text)
    await sign_in(client, "carol")
    colleague = _text((await client.get(f"/jobs/{job.id}")).text)

    assert "Outcome: You ended it." in own and "Cancelled before it finished" not in own
    assert "Outcome: alice ended it." in colleague


async def test_a_status_poll_that_would_show_nothing_new_swaps_nothing(
    client: httpx.AsyncClient, people: World, sessionmaker: Maker
) -> None:
    job = await _job(sessionmaker, people, state="running", slurm_job_id="909")
    await sign_in(client, "alice")

    first = (await client.get(f"/jobs/{job.id}/status")).text
    seen = re.search(r'hx-get="/jobs/\d+/status\?seen=([^"]+)"', first)
    assert seen is not None
    again = await client.get(f"/jobs/{job.id}/status?seen={unescape(seen.group(1))}")
    async with sessionmaker() as session:
        add_event(
            session, job.id, "running", "running", reason="hold requested by alice", source="user"
        )
        await session.commit()
    changed = await client.get(f"/jobs/{job.id}/status?seen={unescape(seen.group(1))}")

    assert again.status_code == 204 and again.text == ""
    assert changed.status_code == 200 and "hold requested by alice" in changed.text
