"""The interactive apps pages with the in-memory scheduler: launch form, refusals at the
field, the sessions table, owner-only actions."""

from __future__ import annotations

from datetime import timedelta

import httpx
import pytest
from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.job_templates import choices
from app.models.base import utc_now
from app.models.interactive import InteractiveSession
from app.models.jobs import Job
from app.scheduler.fake import FakeScheduler
from app.scheduler.registry import SchedulerRegistry
from app.scheduler.states import JobState
from tests.factories import fake_registry, make_app_session
from tests.integration.web.conftest import csrf_from, sign_in
from tests.world import World


@pytest.fixture
def fake() -> FakeScheduler:
    choices._cache.clear()
    return FakeScheduler(accounts={"alice": ["physics"], "carol": ["physics"]})


@pytest.fixture
def registry(fake: FakeScheduler) -> SchedulerRegistry:
    return fake_registry(fake)


def _form(world: World, csrf: str, **changes: str) -> dict[str, str]:
    form = {"csrf_token": csrf, "project_id": str(world.physics.id), "cores": "1"}
    form |= {"memory_gb": "1", "time_minutes": "30", "modules": "", "venv": ""}
    return form | changes


async def test_the_apps_page_lists_jupyterlab_and_its_form_has_the_apps_defaults(
    client: httpx.AsyncClient, world: World
) -> None:
    await sign_in(client, "alice")

    listing = await client.get("/apps")
    form = await client.get("/apps/jupyterlab")

    assert listing.status_code == 200 and '/apps/jupyterlab">JupyterLab</a>' in listing.text
    assert "You have no sessions yet." in listing.text
    assert form.status_code == 200
    assert 'name="cores" type="number" inputmode="numeric" min="1" max="16"' in form.text
    assert 'id="time_minutes"' in form.text and 'value="60"' in form.text
    assert 'name="gpus"' not in form.text  # JupyterLab asks for none
    assert (await client.get("/apps/no-such-app")).status_code == 404


async def test_a_launch_outside_the_apps_limits_is_refused_at_the_field(
    client: httpx.AsyncClient, world: World, fake: FakeScheduler
) -> None:
    csrf = await sign_in(client, "alice")

    response = await client.post("/apps/jupyterlab", data=_form(world, csrf, cores="64"))

    assert response.status_code == 422
    assert '<p class="field-error" id="cores-error">choose 1 to 16 cores</p>' in response.text
    assert 'value="64"' in response.text and fake.specs == {}


async def test_a_launch_submits_the_job_and_the_session_waits_for_its_node(
    client: httpx.AsyncClient,
    world: World,
    fake: FakeScheduler,
    sessionmaker: async_sessionmaker[AsyncSession],
) -> None:
    csrf = await sign_in(client, "alice")

    response = await client.post("/apps/jupyterlab", data=_form(world, csrf))
    listing = await client.get("/apps")

    assert response.status_code == 303 and response.headers["location"].endswith("/apps")
    (spec,) = fake.specs.values()
    assert (spec.cpus_per_task, spec.memory_mb, spec.time_limit) == (1, 1024, 30)
    assert "Waiting for a node" in listing.text and 'hx-trigger="every 3s"' in listing.text
    dashboard = await client.get("/dashboard")
    assert "<strong>JupyterLab</strong>:" in dashboard.text
    assert "waiting for a node" in dashboard.text
    async with sessionmaker() as session:
        (row,) = (await session.scalars(select(InteractiveSession))).unique()
    # Relaunch is offered once the session is over, not beside one still waiting or running.
    assert f'/apps/jupyterlab?relaunch={row.id}"' not in listing.text
    relaunch = await client.get(f"/apps/jupyterlab?relaunch={row.id}")
    assert 'id="memory_gb" name="memory_gb"' in relaunch.text and 'value="30"' in relaunch.text


async def test_only_the_owner_sees_and_ends_a_session(
    client: httpx.AsyncClient,
    world: World,
    fake: FakeScheduler,
    sessionmaker: async_sessionmaker[AsyncSession],
) -> None:
    csrf = await sign_in(client, "alice")
    await client.post("/apps/jupyterlab", data=_form(world, csrf))
    async with sessionmaker() as session:
        (row,) = (await session.scalars(select(InteractiveSession))).unique()
    (slurm_id,) = fake.jobs
    fake.start(slurm_id)

    for other in ("carol", "admin"):
        other_csrf = await sign_in(client, other)
        assert "You have no sessions yet." in (await client.get("/apps")).text
        ended = await client.post(f"/apps/sessions/{row.id}/end", data={"csrf_token": other_csrf})
        assert ended.status_code == 404
        relaunch = await client.get(f"/apps/jupyterlab?relaunch={row.id}")
        assert relaunch.status_code == 404
    assert fake.jobs[slurm_id].state is JobState.RUNNING

    csrf = await sign_in(client, "alice")
    page = await client.get("/apps")
    ended = await client.post(
        f"/apps/sessions/{row.id}/end", data={"csrf_token": csrf_from(page.text)}
    )
    assert ended.status_code == 303
    assert fake.jobs[slurm_id].state is JobState.CANCELLED


async def test_the_sessions_list_refreshes_as_a_fragment_while_a_session_runs(
    client: httpx.AsyncClient, world: World, session: AsyncSession
) -> None:
    await make_app_session(session, world.alice, world.physics, state="running")
    await session.commit()
    await sign_in(client, "alice")

    fragment = await client.get("/apps?fragment=sessions")

    assert fragment.status_code == 200
    assert fragment.text.lstrip().startswith('<section class="panel"')
    assert "Starting the server…" in fragment.text and 'hx-trigger="every 3s"' in fragment.text


async def test_a_running_session_is_looked_at_less_often_and_an_ended_one_not_at_all(
    client: httpx.AsyncClient, world: World, session: AsyncSession
) -> None:
    running = await make_app_session(
        session, world.alice, world.physics, port=5, secret="x" * 20, ready_at=utc_now()
    )
    await session.commit()
    await sign_in(client, "alice")

    while_running = await client.get("/apps?fragment=sessions")
    await session.execute(update(Job).where(Job.id == running.job_id).values(state="cancelled"))
    await session.commit()
    once_ended = await client.get("/apps?fragment=sessions")

    assert 'hx-trigger="every 10s"' in while_running.text and "Connect" in while_running.text
    assert "hx-trigger" not in once_ended.text and "Ended" in once_ended.text


async def test_ending_a_session_asks_first_then_shows_it_ending_and_ended_by_its_owner(
    client: httpx.AsyncClient,
    world: World,
    fake: FakeScheduler,
    sessionmaker: async_sessionmaker[AsyncSession],
) -> None:
    csrf = await sign_in(client, "alice")
    await client.post("/apps/jupyterlab", data=_form(world, csrf))
    async with sessionmaker() as session:
        (row,) = (await session.scalars(select(InteractiveSession))).unique()
        await session.execute(update(Job).values(state="running"))
        row.port, row.secret, row.ready_at = 5, "x" * 20, utc_now()
        await session.commit()
    (slurm_id,) = fake.jobs
    fake.start(slurm_id)

    running = (await client.get("/apps")).text
    ended = await client.post(
        f"/apps/sessions/{row.id}/end",
        data={"csrf_token": csrf_from(running)},
        headers={"HX-Request": "true"},
    )
    ending = (await client.get("/apps?fragment=sessions")).text
    await client.get(f"/apps/sessions/{row.uuid}/lab")
    async with sessionmaker() as session:
        await session.execute(update(Job).values(state="cancelled"))
        await session.commit()
    over = (await client.get("/apps?fragment=sessions")).text

    assert "Save your open notebooks and files first: anything not saved is lost" in running
    assert 'hx-confirm="End your JupyterLab session?' in running
    assert "Running" in running and "Relaunch" not in running
    assert ended.status_code == 204 and ended.headers["HX-Redirect"].endswith("/apps")
    assert "Ending…" in ending and "Running" not in ending
    assert "Connect" not in ending and "Relaunch" not in ending and ">End<" not in ending
    assert 'hx-trigger="every 3s"' in ending
    assert "Ended by you" in over and "Relaunch" in over and "Cancelled" not in over


async def test_a_warned_idle_session_says_until_when_and_keep_it_withdraws_the_warning(
    client: httpx.AsyncClient, world: World, session: AsyncSession
) -> None:
    now = utc_now().replace(microsecond=0)
    row = await make_app_session(
        session, world.alice, world.physics, port=5, secret="x" * 20, ready_at=now,
        idle_since=now - timedelta(minutes=45), idle_warned_at=now,
        idle_ends_at=now + timedelta(minutes=15),
    )  # fmt: skip
    await session.commit()
    await sign_in(client, "alice")

    warned = (await client.get("/apps")).text
    kept = await client.post(
        f"/apps/sessions/{row.id}/keep",
        data={"csrf_token": csrf_from(warned)},
        headers={"HX-Request": "true"},
    )
    await sign_in(client, "carol")
    carols = await client.post(
        f"/apps/sessions/{row.id}/keep", data={"csrf_token": csrf_from(warned)}
    )

    assert "This session has been idle since" in warned
    assert '>Keep it<span class="visually-hidden"> (JupyterLab)</span></button>' in warned
    until = (now + timedelta(minutes=15)).strftime("%Y-%m-%d %H:%M")
    assert "will be ended at <time datetime=" in warned and f"{until} UTC</time>" in warned
    assert kept.status_code == 200 and 'id="app-sessions"' in kept.text
    assert "idle since" not in kept.text and "Running" in kept.text
    assert carols.status_code in (403, 404)
    await session.refresh(row)
    assert row.kept_at is not None and row.idle_ends_at is None


async def test_a_session_ended_for_idleness_reads_so(
    client: httpx.AsyncClient, world: World, session: AsyncSession
) -> None:
    await make_app_session(
        session, world.alice, world.physics, state="cancelled", port=5, secret="x" * 20,
        ready_at=utc_now(), idle_ended_at=utc_now(),
    )  # fmt: skip
    await session.commit()
    await sign_in(client, "alice")

    listing = (await client.get("/apps?fragment=sessions")).text

    assert "Ended: nobody used it" in listing and "Relaunch" in listing


async def test_the_owner_of_a_desktop_lets_a_colleague_watch_and_revokes_them_from_the_page(
    client: httpx.AsyncClient, session: AsyncSession, world: World
) -> None:
    csrf = await sign_in(client, "alice")
    await client.post("/apps/desktop", data=_form(world, csrf))
    row = (await session.scalars(select(InteractiveSession))).one()
    share = f"/apps/sessions/{row.id}/viewers"

    shared = await client.post(share, data={"csrf_token": csrf, "login": "carol"})
    listed = await client.get("/apps")
    nobody = await client.post(share, data={"csrf_token": csrf, "login": "nobody"})
    await sign_in(client, "carol")
    watching = await client.get("/apps")
    csrf = await sign_in(client, "alice")
    viewer = listed.text.split(f"/apps/sessions/{row.id}/viewers/")[1].split("/")[0]
    revoked = await client.post(
        f"/apps/sessions/{row.id}/viewers/{viewer}/revoke", data={"csrf_token": csrf}
    )
    after = await client.get("/apps")

    assert shared.status_code == 303
    assert 'id="view-only"' in listed.text and "Carol" in listed.text
    assert f"/apps/sessions/{row.uuid}/" in listed.text  # the link to send
    assert nobody.status_code == 422 and "no portal user signs in as nobody" in nobody.text
    assert "Desktops shared with you" in watching.text
    assert revoked.status_code == 303
    assert "Nobody else can watch it." in after.text
