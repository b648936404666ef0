"""The workflow pages on the in-memory scheduler: save, run, see the graph, re-run."""

from __future__ import annotations

import html
import re

import httpx
import pytest
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.poller.cycle import poll_cluster_once
from app.scheduler.fake import FakeScheduler
from app.scheduler.registry import SchedulerRegistry
from tests.factories import DEFAULT_CLUSTER, fake_registry, make_template
from tests.integration.web.conftest import sign_in
from tests.world import World

SCRIPT = "#!/bin/bash\ntrue\n"


def visible_text(page: str) -> str:
    """The words of an English page, tags left out."""
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", page)).split())


@pytest.fixture
def fake() -> FakeScheduler:
    return FakeScheduler(accounts={"carol": ["physics"]})


@pytest.fixture
def registry(fake: FakeScheduler) -> SchedulerRegistry:
    return fake_registry(fake)


def _form(csrf: str, project_id: int) -> dict[str, str]:
    return {
        "csrf_token": csrf,
        "name": "chain",
        "project_id": str(project_id),
        "step-0-name": "prepare",
        "step-0-script": SCRIPT,
        "step-1-name": "compute",
        "step-1-script": SCRIPT,
        "step-1-after": "prepare",
        "step-1-kind": "afterok",
        "step-2-name": "report",
        "step-2-script": SCRIPT,
        "step-2-after": "compute",
        "step-2-kind": "afterok",
    }


async def test_a_workflow_is_saved_run_shown_as_a_graph_and_rerun_from_its_failed_step(
    client: httpx.AsyncClient,
    sessionmaker: async_sessionmaker[AsyncSession],
    people: World,
    fake: FakeScheduler,
) -> None:
    csrf = await sign_in(client, "carol")
    assert "New workflow" in visible_text((await client.get("/workflows")).text)
    saved = await client.post("/workflows", data=_form(csrf, people.physics.id))
    assert saved.status_code == 303, saved.text
    detail = await client.get(saved.headers["location"])
    assert "compute — starts after prepare when they succeed" in visible_text(detail.text)
    run_path = saved.headers["location"] + "/run"
    started = await client.post(run_path, data={"csrf_token": csrf})
    assert started.status_code == 303
    prepare, compute, report = sorted(fake.jobs)
    fake.finish(prepare)
    fake.finish(compute, exit_code=1)
    await poll_cluster_once(sessionmaker, DEFAULT_CLUSTER, fake)
    page = await client.get(started.headers["location"])
    text = visible_text(page.text)
    assert 'class="workflow-graph"' in page.text and "Re-run from the failed step" in text
    assert "report : Pending job 1002" in text and "can no longer happen" in text
    polled = await client.get(started.headers["location"], headers={"HX-Request": "true"})
    assert polled.text.lstrip().startswith('<section id="run-status"')
    assert "report : Pending job 1002" in visible_text(polled.text)
    again = await client.post(started.headers["location"] + "/rerun", data={"csrf_token": csrf})
    assert again.status_code == 303
    assert len(fake.jobs) == 5 and fake.jobs[report].state.value == "cancelled"


async def test_a_step_waiting_for_an_unknown_step_is_refused_on_the_form(
    client: httpx.AsyncClient, people: World
) -> None:
    csrf = await sign_in(client, "carol")
    form = _form(csrf, people.physics.id) | {"step-2-after": "nothing"}
    refused = await client.post("/workflows", data=form)
    assert refused.status_code == 422
    assert "Step report waits for nothing, which is not another step." in visible_text(refused.text)


async def test_a_step_can_be_a_template_with_its_values(
    client: httpx.AsyncClient,
    session: AsyncSession,
    people: World,
    fake: FakeScheduler,
) -> None:
    schema = {"parameters": [{"name": "who", "label": "Who", "type": "text", "required": True}]}
    template = await make_template(
        session,
        people.carol,
        name="greet",
        script="#!/bin/bash\necho hello {{ who }}\n",
        parameter_schema=schema,
    )
    await session.commit()
    csrf = await sign_in(client, "carol")
    form = _form(csrf, people.physics.id) | {
        "step-1-script": "",
        "step-1-template": str(template.id),
        "step-1-values": "who=world",
    }
    saved = await client.post("/workflows", data=form)
    assert saved.status_code == 303, saved.text
    detail = visible_text((await client.get(saved.headers["location"])).text)
    assert "Template “greet” · who=world" in detail
    await client.post(saved.headers["location"] + "/run", data={"csrf_token": csrf})
    compute = sorted(fake.specs)[1]
    assert "echo hello world" in fake.specs[compute].script
