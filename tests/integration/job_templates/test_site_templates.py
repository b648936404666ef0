from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.job_templates.context import PartitionChoice, SubmitContext
from app.job_templates.render import render
from app.job_templates.site_templates import site_templates
from app.models.job_templates import JobTemplate, TemplateVersion
from app.models.projects import Project
from app.models.users import User
from app.security import is_password_correct
from app.seed import seed_demo

CONTEXT = SubmitContext(
    cluster="testcluster",
    accounts=("physics",),
    partitions=(PartitionChoice("debug", 60, True), PartitionChoice("long", 10080)),
    gpu_types=("a100",),
    home="/home/alice",
)


def test_every_site_template_renders_with_its_defaults() -> None:
    project = Project(id=1, name="physics", slurm_account="physics", cluster="testcluster")
    for site in site_templates():
        version = TemplateVersion(
            id=1,
            script=site.script,
            parameter_schema=site.parameter_schema,
            defaults={"job_name": site.job_name},
        )
        request = render(version, {"account": "physics"}, project, CONTEXT)
        assert request.script.startswith("#!/bin/bash\n"), site.name
        assert request.stdout_path and request.stdout_path.startswith("/home/alice/portal-jobs/")


def _render_site(name: str, values: dict[str, str]) -> tuple[str, dict[str, str]]:
    site = next(t for t in site_templates() if t.name == name)
    project = Project(id=1, name="physics", slurm_account="physics", cluster="testcluster")
    version = TemplateVersion(
        id=1, script=site.script, parameter_schema=site.parameter_schema, defaults={}
    )
    request = render(version, {"account": "physics", **values}, project, CONTEXT)
    return request.script, dict(request.environment)


def test_modules_and_arguments_are_separate_words() -> None:
    values = {"modules": "cuda pytorch", "arguments": '--epochs 10 --title "first run"'}
    script, environment = _render_site("GPU training", values)
    assert "module load cuda pytorch 2>/dev/null" in script
    assert '--epochs 10 --title "${PORTAL_PARAM_arguments_W4}"\n' in script
    assert environment["PORTAL_PARAM_arguments_W4"] == "first run"


def test_no_arguments_pass_no_empty_argument() -> None:
    script, environment = _render_site("Python in a virtualenv", {"arguments": ""})
    assert script.rstrip().endswith("srun python main.py")
    assert not any(name.startswith("PORTAL_PARAM_arguments") for name in environment)


async def test_seed_is_idempotent_and_creates_demo_world(
    sessionmaker: async_sessionmaker[AsyncSession],
) -> None:
    first = await seed_demo(sessionmaker, ["testcluster"])
    await seed_demo(sessionmaker, ["testcluster"])
    async with sessionmaker() as session:
        users = {u.login: u for u in (await session.execute(select(User))).scalars()}
        templates = (await session.execute(select(func.count()).select_from(JobTemplate))).scalar()
        versions = (
            await session.execute(select(func.count()).select_from(TemplateVersion))
        ).scalar()
    assert sorted(users) == ["admin", "alice", "bob", "carol", "dave"]
    assert users["admin"].is_site_admin and not users["alice"].is_site_admin
    assert is_password_correct(users["alice"].password_hash, "alice-demo")
    assert templates == versions == len(site_templates())
    assert {d.login: d.password for d in first}["bob"] == "bob-demo"


async def test_seed_refuses_production(
    sessionmaker: async_sessionmaker[AsyncSession], monkeypatch: object
) -> None:
    import pytest

    from app.seed import SeedRefused

    monkeypatch.setenv("PORTAL_ENV", "prod")  # type: ignore[attr-defined]
    with pytest.raises(SeedRefused):
        await seed_demo(sessionmaker)
