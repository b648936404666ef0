"""Job history, job detail, their polling fragments and job actions, on both databases."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import httpx
import pytest
from sqlalchemy import update
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.models.jobs import Job, JobEvent
from app.params import encode_cursor
from app.poller.cycle import poll_cluster_once
from app.scheduler.fake import FakeScheduler
from app.scheduler.registry import SchedulerRegistry
from app.scheduler.states import JobState as SchedulerState
from app.scheduler.types import JobSpec
from tests.factories import fake_registry, make_job, make_template
from tests.integration.web.conftest import sign_in
from tests.world import World

# The portability tier: these also run on SQLite (ADR 0018).
pytestmark = pytest.mark.sqlite

POLLING = 'hx-trigger="every 3s"'
SPEC = JobSpec(script="#!/bin/bash\necho hi\n", name="fake", account="physics")


@pytest.fixture
def fake() -> FakeScheduler:
    return FakeScheduler(accounts={"alice": ["physics"], "bob": ["chemistry"]})


@pytest.fixture
def registry(fake: FakeScheduler) -> SchedulerRegistry:
    return fake_registry(fake)


async def _job(
    sessionmaker: async_sessionmaker[AsyncSession], people: World, owner: str, **fields: object
) -> Job:
    user = getattr(people, owner)
    project = people.physics if owner in ("alice", "carol") else people.chemistry
    async with sessionmaker() as session:
        job = await make_job(session, user, project, **fields)  # type: ignore[arg-type]
        await session.commit()
    return job


async def _set_state(sessionmaker: async_sessionmaker[AsyncSession], job: Job, state: str) -> None:
    async with sessionmaker() as session:
        await session.execute(update(Job).where(Job.id == job.id).values(state=state))
        await session.commit()


async def test_history_shows_own_and_project_jobs_but_not_other_projects(
    client: httpx.AsyncClient, people: World, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    await _job(sessionmaker, people, "alice", name="alice-run")
    await _job(sessionmaker, people, "carol", name="carol-run")
    await _job(sessionmaker, people, "bob", name="bob-run")
    await sign_in(client, "alice")

    mine = await client.get("/jobs")
    projects = await client.get("/jobs", params={"whose": "projects"})

    assert mine.status_code == projects.status_code == 200, mine.text
    assert "alice-run" in mine.text and "carol-run" not in mine.text
    assert '<option value="mine" selected>Mine</option>' in mine.text
    assert "alice-run" in projects.text and "carol-run" in projects.text
    assert "bob-run" not in mine.text + projects.text
    assert '<th scope="col">Owner</th>' in projects.text
    assert re.search(
        r'id="job-row-\d+">.*?carol-run.*?data-label="Owner">carol<', projects.text, re.S
    )


async def test_an_array_task_is_found_by_its_slurm_id_and_counts_read_right(
    client: httpx.AsyncClient, people: World, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    array = await _job(
        sessionmaker, people, "alice", name="sweep", slurm_job_id="169", array_spec="1-2"
    )
    for index, state in ((1, "completed"), (2, "failed")):
        await _job(
            sessionmaker,
            people,
            "alice",
            name="sweep",
            state=state,
            slurm_job_id=f"169_{index}",
            array_parent_id=array.id,
            array_task_id=index,
        )
    single = await _job(
        sessionmaker, people, "alice", name="one", slurm_job_id="170", array_spec="4"
    )
    await _job(
        sessionmaker,
        people,
        "alice",
        name="one",
        state="running",
        slurm_job_id="170_4",
        array_parent_id=single.id,
        array_task_id=4,
    )
    await sign_in(client, "alice")

    task = await client.get("/jobs/rows", params={"q": "169_2"})
    listing = await client.get("/jobs")

    assert "<code>169_2</code>" in task.text and "<code>169_1</code>" not in task.text
    assert "<code>169_2</code>" not in listing.text
    assert "2 tasks: 1 completed, 0 running, 0 waiting, 1 failed or cancelled" in listing.text
    assert "1 task: 0 completed, 1 running" in listing.text


async def test_history_filters_by_state_and_searches_name_and_slurm_id(
    client: httpx.AsyncClient, people: World, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    await _job(sessionmaker, people, "alice", name="md-relax", state="running", slurm_job_id="501")
    await _job(sessionmaker, people, "alice", name="md-prod", state="completed", slurm_job_id="502")
    await _job(sessionmaker, people, "alice", name="dft", state="completed", slurm_job_id="503")
    await sign_in(client, "alice")

    by_state = await client.get("/jobs/rows", params={"state": "completed", "q": "md"})
    by_id = await client.get("/jobs/rows", params={"q": "503"})

    assert "md-prod" in by_state.text
    assert "md-relax" not in by_state.text and "dft" not in by_state.text
    assert "dft" in by_id.text and "md-prod" not in by_id.text


async def test_filtering_from_the_form_puts_the_filtered_page_in_the_address_bar(
    client: httpx.AsyncClient, people: World
) -> None:
    await sign_in(client, "alice")

    from_form = await client.get(
        "/jobs/rows",
        params={"state": "failed", "q": "md & co"},
        headers={"HX-Request": "true", "HX-Trigger": "job-filters"},
    )
    from_polling = await client.get(
        "/jobs/rows", headers={"HX-Request": "true", "HX-Trigger": "job-results"}
    )

    assert from_form.headers["HX-Push-Url"] == "/jobs?state=failed&q=md+%26+co"
    assert "HX-Push-Url" not in from_polling.headers


async def test_history_filters_by_template_and_date_range(
    client: httpx.AsyncClient, people: World, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    async with sessionmaker() as session:
        template = await make_template(session, people.alice, name="Hello")
        await session.commit()
    await _job(
        sessionmaker,
        people,
        "alice",
        name="from-template",
        template_version_id=template.current_version_id,
    )
    await _job(
        sessionmaker, people, "alice", name="old-one", created_at=datetime(2020, 1, 5, tzinfo=UTC)
    )
    await sign_in(client, "alice")

    templated = await client.get("/jobs/rows", params={"template": template.id})
    in_2020 = await client.get("/jobs/rows", params={"since": "2020-01-01", "until": "2020-01-31"})

    assert "from-template" in templated.text and "old-one" not in templated.text
    assert "old-one" in in_2020.text and "from-template" not in in_2020.text


async def test_history_pages_with_a_keyset_cursor(
    client: httpx.AsyncClient, people: World, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    for number in range(55):
        await _job(sessionmaker, people, "alice", name=f"run-{number:02d}", state="completed")
    await sign_in(client, "alice")

    first = await client.get("/jobs")
    next_link = re.search(r'href="(/jobs\?cursor=[\w-]+)" rel="next"', first.text)
    assert next_link is not None
    second = await client.get(next_link.group(1))
    forged = await client.get("/jobs?cursor=not-ours")

    assert first.text.count('<tr id="job-row-') == 50
    assert "run-54" in first.text and "run-04" not in first.text
    assert second.text.count('<tr id="job-row-') == 5
    assert "run-04" in second.text and 'rel="next"' not in second.text
    # The same opaque cursor as the API's: the job list's next page there is this one.
    assert next_link.group(1).removeprefix("/jobs?cursor=") == encode_cursor(
        int(re.findall(r'<tr id="job-row-(\d+)"', first.text)[-1])
    )
    assert forged.status_code in (400, 422) and "cursor" in forged.text


async def test_array_job_is_one_row_with_task_counts(
    client: httpx.AsyncClient, people: World, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    parent = await _job(
        sessionmaker, people, "alice", name="sweep", state="running", array_spec="1-4"
    )
    for task, state in enumerate(["completed", "completed", "running", "failed"], start=1):
        await _job(
            sessionmaker,
            people,
            "alice",
            name="sweep",
            state=state,
            array_parent_id=parent.id,
            array_task_id=task,
        )
    await sign_in(client, "alice")

    page = await client.get("/jobs")

    assert page.text.count('<tr id="job-row-') == 1
    assert "4 tasks: 2 completed, 1 running, 0 waiting, 1 failed or cancelled" in page.text


async def test_job_list_polls_while_a_job_is_active_and_stops_once_all_have_ended(
    client: httpx.AsyncClient, people: World, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    job = await _job(sessionmaker, people, "alice", state="running")
    await sign_in(client, "alice")

    while_running = await client.get("/jobs/rows", headers={"HX-Request": "true"})
    await _set_state(sessionmaker, job, "completed")
    after_end = await client.get("/jobs/rows", headers={"HX-Request": "true"})

    assert POLLING in while_running.text and "Running" in while_running.text
    assert POLLING not in after_end.text and "Completed" in after_end.text
    assert "<html" not in after_end.text


async def test_job_status_fragment_stops_polling_when_the_job_ends(
    client: httpx.AsyncClient, people: World, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    job = await _job(sessionmaker, people, "alice", state="pending", reason="Priority")
    await sign_in(client, "alice")

    pending = await client.get(f"/jobs/{job.id}/status")
    await _set_state(sessionmaker, job, "cancelled")
    ended = await client.get(f"/jobs/{job.id}/status")

    assert 'hx-trigger="every ' in pending.text
    assert "Other jobs with a higher priority" in pending.text
    assert "hx-trigger" not in ended.text and "Cancelled before it finished" in ended.text


@pytest.mark.parametrize(
    ("path", "method"),
    [
        ("/jobs/{id}", "GET"),
        ("/jobs/{id}/status", "GET"),
        ("/jobs/{id}/logs/stdout", "GET"),
        ("/jobs/{id}/logs/stdout/stream", "GET"),
        ("/jobs/{id}/cancel", "GET"),
        ("/jobs/{id}/cancel", "POST"),
        ("/jobs/{id}/resubmit", "GET"),
    ],
)
async def test_user_cannot_see_tail_or_cancel_another_projects_job(
    client: httpx.AsyncClient,
    people: World,
    sessionmaker: async_sessionmaker[AsyncSession],
    fake: FakeScheduler,
    path: str,
    method: str,
) -> None:
    job = await _job(sessionmaker, people, "bob", state="running", slurm_job_id="900")
    token = await sign_in(client, "alice")

    response = await client.request(
        method, path.format(id=job.id), data={"csrf_token": token} if method == "POST" else None
    )

    assert response.status_code == 404
    assert "cancel" not in fake.calls and "read_file" not in fake.calls


async def test_manager_sees_a_project_members_job(
    client: httpx.AsyncClient, people: World, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    job = await _job(sessionmaker, people, "dave", name="daves-job", state="running")
    await sign_in(client, "bob")

    page = await client.get(f"/jobs/{job.id}")

    assert page.status_code == 200 and "daves-job" in page.text


async def test_cancel_without_the_csrf_token_is_refused(
    client: httpx.AsyncClient,
    people: World,
    sessionmaker: async_sessionmaker[AsyncSession],
    fake: FakeScheduler,
) -> None:
    job = await _job(sessionmaker, people, "alice", state="running", slurm_job_id="42")
    await sign_in(client, "alice")

    response = await client.post(f"/jobs/{job.id}/cancel", data={"csrf_token": "forged"})

    assert response.status_code == 403
    assert "cancel" not in fake.calls


async def test_cancel_from_the_confirmation_page_asks_the_cluster_and_returns_to_the_job(
    client: httpx.AsyncClient,
    people: World,
    sessionmaker: async_sessionmaker[AsyncSession],
    fake: FakeScheduler,
) -> None:
    slurm_id = await fake.submit(SPEC, "alice")
    job = await _job(sessionmaker, people, "alice", state="running", slurm_job_id=slurm_id)
    await sign_in(client, "alice")
    confirm = await client.get(f"/jobs/{job.id}/cancel")
    token = re.search(r'name="csrf_token" value="([^"]+)"', confirm.text)
    assert token is not None and "Yes, cancel job" in confirm.text

    response = await client.post(f"/jobs/{job.id}/cancel", data={"csrf_token": token.group(1)})

    assert response.status_code == 303
    assert response.headers["location"] == f"/jobs/{job.id}?done=cancel"
    assert "cancel" in fake.calls


async def test_htmx_cancel_returns_the_status_block_with_a_notice(
    client: httpx.AsyncClient,
    people: World,
    sessionmaker: async_sessionmaker[AsyncSession],
    fake: FakeScheduler,
) -> None:
    slurm_id = await fake.submit(SPEC, "alice")
    job = await _job(sessionmaker, people, "alice", state="running", slurm_job_id=slurm_id)
    token = await sign_in(client, "alice")

    response = await client.post(
        f"/jobs/{job.id}/cancel", headers={"HX-Request": "true", "X-CSRF-Token": token}
    )

    assert response.status_code == 200
    assert 'id="job-status"' in response.text and "Cancellation requested" in response.text


async def test_detail_explains_a_memory_kill_and_offers_more_memory(
    client: httpx.AsyncClient,
    people: World,
    sessionmaker: async_sessionmaker[AsyncSession],
    fake: FakeScheduler,
) -> None:
    job = await _job(
        sessionmaker,
        people,
        "alice",
        state="failed",
        slurm_job_id="77",
        exit_signal=9,
        memory_mb=1000,
        max_rss_bytes=1000 * 1024 * 1024,
        elapsed_seconds=600,
        total_cpu_seconds=300,
        alloc_cpus=2,
        time_limit_minutes=60,
    )
    async with sessionmaker() as session:
        session.add(JobEvent(job_id=job.id, to_state="running", source="poller"))
        await session.commit()
    await sign_in(client, "alice")

    detail = await client.get(f"/jobs/{job.id}")
    form = await client.get(f"/jobs/{job.id}/resubmit")

    assert "Killed for using more memory than requested" in detail.text
    assert "25.0 % of 2 CPUs" in detail.text  # 300 CPU-s / (600 s x 2 CPUs)
    assert "Resubmit with more memory" in detail.text
    assert 'value="1500M"' in form.text or 'value="1.5G"' in form.text


async def test_timeout_resubmit_doubles_the_limit_capped_at_the_partition_maximum(
    client: httpx.AsyncClient,
    people: World,
    sessionmaker: async_sessionmaker[AsyncSession],
    fake: FakeScheduler,
) -> None:
    job = await _job(
        sessionmaker, people, "alice", state="timeout", slurm_job_id="78", time_limit_minutes=45
    )
    await sign_in(client, "alice")

    detail = await client.get(f"/jobs/{job.id}")
    form = await client.get(f"/jobs/{job.id}/resubmit")

    assert "Ran out of time" in detail.text and "Resubmit with more time" in detail.text
    assert 'value="1:00:00"' in form.text  # 90 min wanted, the debug partition allows 60
    assert "the longest its partition allows" in form.text


async def test_resubmit_with_a_bad_value_shows_the_error_next_to_the_field(
    client: httpx.AsyncClient,
    people: World,
    sessionmaker: async_sessionmaker[AsyncSession],
    fake: FakeScheduler,
) -> None:
    job = await _job(sessionmaker, people, "alice", state="completed", slurm_job_id="79")
    token = await sign_in(client, "alice")

    response = await client.post(
        f"/jobs/{job.id}/resubmit",
        data={"csrf_token": token, "name": "again", "time_limit": "soon", "memory": "4G"},
    )

    assert response.status_code == 422
    assert 'id="time_limit-error"' in response.text and 'aria-invalid="true"' in response.text
    assert "submit" not in fake.calls


@pytest.mark.parametrize(
    ("state", "action", "scheduler_state"),
    [("pending", "hold", SchedulerState.QUEUED), ("held", "release", SchedulerState.QUEUED_HELD)],
)
async def test_owner_holds_a_pending_job_and_releases_a_held_one(
    client: httpx.AsyncClient,
    people: World,
    sessionmaker: async_sessionmaker[AsyncSession],
    fake: FakeScheduler,
    state: str,
    action: str,
    scheduler_state: SchedulerState,
) -> None:
    slurm_id = await fake.submit(SPEC, "alice")
    fake.set_state(slurm_id, scheduler_state)
    job = await _job(sessionmaker, people, "alice", state=state, slurm_job_id=slurm_id)
    token = await sign_in(client, "alice")
    detail = await client.get(f"/jobs/{job.id}")
    assert f'hx-post="/jobs/{job.id}/{action}"' in detail.text

    response = await client.post(f"/jobs/{job.id}/{action}", data={"csrf_token": token})

    assert response.status_code == 303
    assert action in fake.calls


def _time_element(moment: datetime) -> str:
    """A time as the pages send it: UTC, which the browser rewrites into its own zone."""
    utc = f"{moment:%Y-%m-%d %H:%M:%S} UTC"
    stamp = f"{moment:%Y-%m-%dT%H:%M:%S}Z"
    return f'<time datetime="{stamp}" title="{utc}" data-local-time="second">{utc}</time>'


async def test_pending_job_shows_slurms_expected_start_as_an_estimate_until_it_runs(
    client: httpx.AsyncClient,
    people: World,
    sessionmaker: async_sessionmaker[AsyncSession],
    fake: FakeScheduler,
) -> None:
    slurm_id = await fake.submit(SPEC, "alice")
    expected = (datetime.now(UTC) + timedelta(hours=2)).replace(microsecond=0)
    fake.set_state(slurm_id, SchedulerState.QUEUED, start_time=expected, reason="Priority")
    job = await _job(sessionmaker, people, "alice", state="pending", slurm_job_id=slurm_id)
    await sign_in(client, "alice")

    await poll_cluster_once(sessionmaker, "testcluster", fake)
    pending = await client.get(f"/jobs/{job.id}")
    listed = await client.get("/jobs")
    started = fake.start(slurm_id).start_time
    await poll_cluster_once(sessionmaker, "testcluster", fake)
    running = await client.get(f"/jobs/{job.id}")

    estimate = _time_element(expected)
    assert "<dt>Started</dt><dd>—</dd>" in pending.text
    assert f"<strong>Expected to start:</strong> {estimate}" in pending.text
    assert f'<span class="job-starts">expected to start {estimate}</span>' in listed.text
    assert started is not None
    assert f"<dt>Started</dt><dd>{_time_element(started)}</dd>" in running.text
    assert "Expected to start" not in running.text
