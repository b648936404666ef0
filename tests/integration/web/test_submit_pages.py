from datetime import timedelta

import httpx
import pytest
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.job_templates import choices
from app.models.jobs import Job
from app.scheduler.fake import FakeScheduler
from app.scheduler.registry import SchedulerRegistry
from app.scheduler.types import PartitionInfo
from tests.factories import fake_registry
from tests.integration.web.conftest import sign_in
from tests.integration.web.helpers import make_template
from tests.world import World

Maker = async_sessionmaker[AsyncSession]


def _partition(name: str, hours: int, is_default: bool) -> PartitionInfo:
    return PartitionInfo(
        name=name,
        max_time=timedelta(hours=hours),
        default_time=None,
        is_default=is_default,
        state="up",
        total_nodes=1,
        idle_nodes=1,
        total_cpus=2,
        idle_cpus=2,
    )


@pytest.fixture
def fake() -> FakeScheduler:
    choices._cache.clear()
    return FakeScheduler(
        accounts={"alice": ["physics"], "carol": ["physics"]},
        partitions=[_partition("debug", 1, True), _partition("long", 168, False)],
    )


@pytest.fixture
def registry(fake: FakeScheduler) -> SchedulerRegistry:
    return fake_registry(fake)


def values(csrf: str, **changes: str) -> dict[str, str]:
    form = {
        "csrf_token": csrf,
        "idempotency_key": "k-1",
        "job_name": "demo",
        "account": "physics",
        "message": "hello",
        "partition": "debug",
        "time_limit": "0:10:00",
        "output": "~/portal-jobs/%x-%j.out",
    }
    form.update(changes)
    return form


async def test_form_has_a_label_for_every_input_and_defaults_filled(
    client: httpx.AsyncClient, people: World, sessionmaker: Maker, fake: FakeScheduler
) -> None:
    template = await make_template(sessionmaker, people.admin, "Site one", scope="site")
    await sign_in(client, "alice")
    page = await client.get(f"/templates/{template.id}/submit")
    assert page.status_code == 200
    for field in ("job_name", "account", "message", "partition", "time_limit", "output"):
        assert f'<label for="{field}">' in page.text
        assert f'id="{field}"' in page.text
    assert '<option translate="no" value="long">long</option>' in page.text
    assert "--partition=debug" in page.text and "--time=0-00:10:00" in page.text
    help_line = 'id="time_limit-help">How long the job may run. As sbatch reads it: 90 is'
    assert help_line in page.text and "1:30 is 1 minute 30 seconds." in page.text


async def test_preview_fragment_follows_what_is_typed(
    client: httpx.AsyncClient, people: World, sessionmaker: Maker, fake: FakeScheduler
) -> None:
    template = await make_template(sessionmaker, people.admin, "Site one", scope="site")
    csrf = await sign_in(client, "alice")
    response = await client.post(
        f"/templates/{template.id}/submit/preview",
        data=values(csrf, message="$(id) `x`"),
        headers={"HX-Request": "true"},
    )
    assert response.text.lstrip().startswith('<section id="preview"')
    # The value travels in the job's environment; the script only refers to it.
    assert "echo &#34;${PORTAL_PARAM_message}&#34;" in response.text
    assert "env &#39;PORTAL_PARAM_message=$(id) `x`&#39; sbatch" in response.text


async def test_time_over_the_partition_limit_is_shown_next_to_the_field(
    client: httpx.AsyncClient, people: World, sessionmaker: Maker, fake: FakeScheduler
) -> None:
    template = await make_template(sessionmaker, people.admin, "Site one", scope="site")
    csrf = await sign_in(client, "alice")
    response = await client.post(
        f"/templates/{template.id}/submit", data=values(csrf, time_limit="2:00:00")
    )
    assert response.status_code == 422
    assert (
        '<p class="field-error" id="time_limit-error">Partition debug allows at most 1:00:00.</p>'
        in response.text
    )
    assert 'value="2:00:00"' in response.text
    assert fake.specs == {}


@pytest.mark.parametrize(
    ("field", "hostile"),
    [
        ("partition", "debug --uid=0"),
        ("output", "/etc/cron.d/x"),
        ("message", "a\n#SBATCH --account=chemistry"),
        ("account", "chemistry"),
        ("job_name", "x$(id)"),
    ],
)
async def test_hostile_values_are_refused_before_reaching_the_scheduler(
    client: httpx.AsyncClient,
    people: World,
    sessionmaker: Maker,
    fake: FakeScheduler,
    field: str,
    hostile: str,
) -> None:
    template = await make_template(sessionmaker, people.admin, "Site one", scope="site")
    csrf = await sign_in(client, "alice")
    response = await client.post(
        f"/templates/{template.id}/submit", data=values(csrf, **{field: hostile})
    )
    assert response.status_code == 422
    assert f'id="{field}-error"' in response.text
    assert fake.specs == {}


async def test_valid_submission_goes_to_the_job_page(
    client: httpx.AsyncClient, people: World, sessionmaker: Maker, fake: FakeScheduler
) -> None:
    template = await make_template(sessionmaker, people.admin, "Site one", scope="site")
    csrf = await sign_in(client, "alice")
    response = await client.post(
        f"/templates/{template.id}/submit", data=values(csrf, message="it's $HOME")
    )
    assert response.status_code == 303
    async with sessionmaker() as session:
        job = (await session.execute(select(Job))).scalar_one()
    assert response.headers["location"] == f"/jobs/{job.id}"
    spec = next(iter(fake.specs.values()))
    assert spec.account == "physics" and spec.partition == "debug"
    assert spec.stdout == "/home/alice/portal-jobs/%x-%j.out"
    assert 'echo "${PORTAL_PARAM_message}"' in spec.script
    assert spec.environment == {"PORTAL_PARAM_message": "it's $HOME"}


async def test_htmx_submission_redirects_with_hx_redirect(
    client: httpx.AsyncClient, people: World, sessionmaker: Maker, fake: FakeScheduler
) -> None:
    template = await make_template(sessionmaker, people.admin, "Site one", scope="site")
    csrf = await sign_in(client, "alice")
    response = await client.post(
        f"/templates/{template.id}/submit", data=values(csrf), headers={"HX-Request": "true"}
    )
    assert response.headers["HX-Redirect"].startswith("/jobs/")


async def test_submission_without_csrf_is_refused(
    client: httpx.AsyncClient, people: World, sessionmaker: Maker, fake: FakeScheduler
) -> None:
    template = await make_template(sessionmaker, people.admin, "Site one", scope="site")
    await sign_in(client, "alice")
    form = values("")
    del form["csrf_token"]
    response = await client.post(f"/templates/{template.id}/submit", data=form)
    assert response.status_code == 403
    assert fake.specs == {}


async def test_user_without_a_project_is_told_why_they_cannot_submit(
    client: httpx.AsyncClient, people: World, sessionmaker: Maker, fake: FakeScheduler
) -> None:
    template = await make_template(sessionmaker, people.admin, "Site one", scope="site")
    await sign_in(client, "admin")
    page = await client.get(f"/templates/{template.id}/submit")
    assert page.status_code == 200
    assert "no account to charge" in page.text
