"""The "Submit a script" page: a researcher's own script, read, checked and run as written."""

from __future__ import annotations

import html

import httpx
import pytest
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.job_templates import choices
from app.scheduler.fake import FakeScheduler
from app.scheduler.registry import SchedulerRegistry
from tests.factories import fake_registry, make_job
from tests.integration.web.conftest import sign_in
from tests.integration.web.helpers import make_template
from tests.world import World

Maker = async_sessionmaker[AsyncSession]
SCRIPT = (
    "#!/bin/bash\n#SBATCH --job-name=tutorial\n#SBATCH --time=0:20:00\n"
    "#SBATCH --output=logs/%x-%j.out\n\narr=(a b); echo ${#arr[@]} {{ x }} $1\n"
    "#SBATCH --partition=long\n"
)


@pytest.fixture
def fake() -> FakeScheduler:
    choices._cache.clear()
    return FakeScheduler(accounts={"alice": ["physics"], "carol": ["physics"]})


@pytest.fixture
def registry(fake: FakeScheduler) -> SchedulerRegistry:
    return fake_registry(fake)


def form(csrf: str, project_id: int, script: str = SCRIPT, args: str = "") -> dict[str, str]:
    return {"csrf_token": csrf, "project_id": str(project_id), "script": script, "args": args}


async def test_the_page_is_in_the_navigation_and_labels_every_field(
    client: httpx.AsyncClient, people: World, fake: FakeScheduler
) -> None:
    await sign_in(client, "alice")
    page = await client.get("/submit/script")
    assert page.status_code == 200
    assert '/submit/script" aria-current="page">Submit a script</a>' in page.text
    for field in ("project_id", "script", "script_file", "args"):
        assert f'<label for="{field}">' in page.text and f'id="{field}"' in page.text


async def test_checking_shows_what_sbatch_reads_refuses_and_ignores(
    client: httpx.AsyncClient, people: World, fake: FakeScheduler
) -> None:
    csrf = await sign_in(client, "alice")
    script = SCRIPT.replace("--time=0:20:00", "--ntaks-per-node=2")
    response = await client.post(
        "/submit/script/check",
        data=form(csrf, people.physics.id, script),
        headers={"HX-Request": "true"},
    )
    text = html.unescape(response.text)
    assert text.lstrip().startswith('<section id="reading"')
    assert "line 3: sbatch has no option --ntaks-per-node (did you mean --ntasks-per-node?)" in text
    assert "<code>--job-name</code></td><td><code>tutorial</code>" in text
    assert "line 7: <code>#SBATCH --partition=long</code>" in text
    assert fake.specs == {}


async def test_a_pasted_script_is_submitted_byte_for_byte_with_its_arguments(
    client: httpx.AsyncClient, people: World, fake: FakeScheduler
) -> None:
    csrf = await sign_in(client, "alice")
    pasted = SCRIPT.replace("\n", "\r\n")  # as a browser sends a textarea
    response = await client.post(
        "/submit/script", data=form(csrf, people.physics.id, pasted, "first arg\r\n$(id)")
    )
    assert response.status_code == 303, response.text
    assert response.headers["location"].startswith("/jobs/")
    [spec] = fake.specs.values()
    assert spec.script == SCRIPT
    assert spec.args == ("first arg", "$(id)")
    assert (spec.name, spec.time_limit_minutes) == ("tutorial", 20)
    assert spec.stdout == "/home/alice/logs/%x-%j.out"


async def test_an_uploaded_file_is_the_script_and_names_the_job(
    client: httpx.AsyncClient, people: World, fake: FakeScheduler
) -> None:
    csrf = await sign_in(client, "alice")
    script = "#!/bin/bash\necho uploaded\n"
    response = await client.post(
        "/submit/script",
        data=form(csrf, people.physics.id, script=""),
        files={"script_file": ("my-run.sh", script.encode(), "text/x-sh")},
    )
    assert response.status_code == 303, response.text
    [spec] = fake.specs.values()
    assert (spec.script, spec.name) == (script, "my-run.sh")


async def test_a_refused_script_says_why_and_keeps_what_was_typed(
    client: httpx.AsyncClient, people: World, fake: FakeScheduler
) -> None:
    csrf = await sign_in(client, "alice")
    script = "#!/bin/bash\n#SBATCH --ntaks-per-node=4\nsrun hostname\n"
    response = await client.post("/submit/script", data=form(csrf, people.physics.id, script))
    assert response.status_code == 422
    text = html.unescape(response.text)
    assert 'id="form-errors"' in text
    assert "did you mean --ntasks-per-node?" in text
    assert "srun hostname\n</textarea>" in text
    assert fake.specs == {}


async def test_edit_and_resubmit_prefills_the_users_own_job_only(
    client: httpx.AsyncClient, people: World, session: AsyncSession, fake: FakeScheduler
) -> None:
    mine = await make_job(
        session,
        people.alice,
        people.physics,
        script="#!/bin/bash\necho mine\n",
        script_args=["a b"],
    )
    theirs = await make_job(session, people.bob, people.chemistry)
    await session.commit()
    await sign_in(client, "alice")
    page = await client.get(f"/submit/script?from_job={mine.id}")
    assert page.status_code == 200
    assert "echo mine\n</textarea>" in page.text and ">a b</textarea>" in page.text
    assert (await client.get(f"/submit/script?from_job={theirs.id}")).status_code == 404


async def test_edit_and_resubmit_of_a_template_job_asks_for_what_it_ran_with(
    client: httpx.AsyncClient, people: World, sessionmaker: Maker, fake: FakeScheduler
) -> None:
    template = await make_template(sessionmaker, people.admin, "Site one", scope="site")
    csrf = await sign_in(client, "alice")
    message = 'it\'s $(id) `x` "quoted"; echo pwned'
    submitted = await client.post(
        f"/templates/{template.id}/submit",
        data={
            "csrf_token": csrf,
            "idempotency_key": "first",
            "job_name": "demo",
            "account": "physics",
            "message": message,
            "partition": "debug",
            "time_limit": "0:45:00",
            "output": "~/portal-jobs/%x-%j.out",
        },
    )
    assert submitted.status_code == 303, submitted.text
    job_id = submitted.headers["location"].rsplit("/", 1)[1]
    detail = await client.get(f"/jobs/{job_id}")
    assert f'/submit/script?from_job={job_id}">Edit and resubmit</a>' in detail.text
    page = await client.get(f"/submit/script?from_job={job_id}")
    shown = html.unescape(page.text.split('name="script"', 1)[1].split(">", 1)[1])
    shown = shown.split("</textarea>", 1)[0]
    assert "#SBATCH --partition=debug\n#SBATCH --time=45\n" in shown
    assert "export PORTAL_PARAM_message=" in shown
    [first] = fake.specs.values()
    again = await client.post("/submit/script", data=form(csrf, people.physics.id, shown))
    assert again.status_code == 303, again.text
    second = next(spec for spec in fake.specs.values() if spec is not first)
    assert second.script == shown  # the text the form showed, byte for byte
    same = ("name", "partition", "time_limit_minutes", "stdout", "account")
    assert {f: getattr(second, f) for f in same} == {f: getattr(first, f) for f in same}
    # The template job ran where sbatch starts (the home directory); the script says so.
    assert (first.working_dir or "/home/alice") == second.working_dir
    assert first.environment == {"PORTAL_PARAM_message": message} and not second.environment


async def test_the_cluster_check_says_accepted_or_why_not_and_submits_nothing(
    client: httpx.AsyncClient, people: World, fake: FakeScheduler
) -> None:
    csrf = await sign_in(client, "alice")
    headers = {"HX-Request": "true"}
    accepted = await client.post(
        "/submit/script/preflight", data=form(csrf, people.physics.id), headers=headers
    )
    assert accepted.text.lstrip().startswith('<div id="verdict"')
    assert "The cluster would accept this job as it is." in accepted.text
    refused = await client.post(
        "/submit/script/preflight",
        data=form(csrf, people.physics.id, SCRIPT.replace("tutorial", "x$(id)")),
        headers=headers,
    )
    assert "This job would be refused:" in html.unescape(refused.text)
    assert "name" in refused.text
    assert fake.specs == {} and "submit" not in fake.calls
