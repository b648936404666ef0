"""Demo data for development: users, projects, memberships and the site templates.

``python -m app.seed`` fills the configured database and prints the demo sign-ins. Running
it again changes nothing that is already in place. It refuses to run in production.
"""

from __future__ import annotations

import asyncio
import itertools
import os
from collections.abc import Iterable
from dataclasses import dataclass

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.db import create_engine, create_sessionmaker, unit_of_work
from app.job_templates import repository as templates_repository
from app.job_templates.service import TemplateDraft, create, update
from app.job_templates.site_templates import SiteTemplate, site_templates
from app.models.projects import Membership, Project
from app.models.users import User, UserClusterAccount
from app.security import hash_password, is_password_correct
from app.users.actor import Actor

DEMO_CLUSTER = "testcluster"
# login -> (display name, Slurm account, project role); admin has no cluster account.
DEMO_USERS: dict[str, tuple[str, str | None, str | None]] = {
    "admin": ("Site Administrator", None, None),
    "alice": ("Alice Physicist", "physics", "manager"),
    "carol": ("Carol Physicist", "physics", "member"),
    "bob": ("Bob Chemist", "chemistry", "manager"),
    "dave": ("Dave Chemist", "chemistry", "member"),
}
DEMO_PROJECTS = {"physics": "Physics department", "chemistry": "Chemistry department"}


class SeedRefused(RuntimeError):
    """Demo accounts with known passwords must never reach a production database."""


@dataclass(frozen=True, slots=True)
class DemoLogin:
    login: str
    password: str
    role: str


def demo_password(login: str) -> str:
    return f"{login}-demo"


async def _upsert_user(session: AsyncSession, login: str, clusters: list[str]) -> User:
    display_name, account, _role = DEMO_USERS[login]
    user = (await session.execute(select(User).where(User.login == login))).scalar_one_or_none()
    if user is None:
        user = User(login=login, display_name=display_name, email=f"{login}@example.org")
        session.add(user)
    user.is_site_admin = login == "admin"
    user.is_active = True
    if not is_password_correct(user.password_hash, demo_password(login)):
        user.password_hash = hash_password(demo_password(login))
    await session.flush()
    if account is not None:
        for cluster in clusters:
            await _ensure_cluster_account(session, user, cluster)
    return user


async def _ensure_cluster_account(session: AsyncSession, user: User, cluster: str) -> None:
    existing = await session.execute(
        select(UserClusterAccount).where(
            UserClusterAccount.user_id == user.id, UserClusterAccount.cluster == cluster
        )
    )
    if existing.scalar_one_or_none() is None:
        session.add(UserClusterAccount(user_id=user.id, cluster=cluster, username=user.login))
        await session.flush()


async def _upsert_project(
    session: AsyncSession, account: str, cluster: str, *, is_first: bool
) -> Project:
    found = await session.execute(
        select(Project).where(Project.cluster == cluster, Project.slurm_account == account)
    )
    project = found.scalar_one_or_none()
    if project is None:
        # The first cluster's project keeps the plain name; the others say where they are.
        name = account if is_first else f"{account} ({cluster})"
        project = Project(
            name=name, slurm_account=account, cluster=cluster, description=DEMO_PROJECTS[account]
        )
        session.add(project)
        await session.flush()
    return project


async def _ensure_membership(
    session: AsyncSession, user: User, project: Project, role: str
) -> None:
    found = await session.execute(
        select(Membership).where(Membership.user_id == user.id, Membership.project_id == project.id)
    )
    membership = found.scalar_one_or_none()
    if membership is None:
        session.add(Membership(user_id=user.id, project_id=project.id, role=role))
    else:
        membership.role = role
    await session.flush()


def _draft(site: SiteTemplate) -> TemplateDraft:
    return TemplateDraft(
        name=site.name,
        description=site.description,
        script=site.script,
        parameter_schema=site.parameter_schema,
        defaults={"job_name": site.job_name},
        scope="site",
        change_note="Shipped with the portal",
    )


async def install_site_templates(session: AsyncSession, admin: User) -> None:
    """Adds missing site templates; a changed shipped template becomes a new version."""
    actor = Actor(user_id=admin.id, login=admin.login, is_site_admin=True)
    for site in site_templates():
        existing = await templates_repository.get_site_by_name(session, site.name)
        if existing is None:
            await create(session, actor, _draft(site))
            continue
        current = existing.current_version
        is_same = current is not None and (
            current.script == site.script and current.parameter_schema == site.parameter_schema
        )
        if not is_same:
            await update(session, actor, existing.id, _draft(site))


async def seed_demo(
    sessionmaker: async_sessionmaker[AsyncSession], clusters: Iterable[str] = ()
) -> list[DemoLogin]:
    """Create (or bring back) the demo users, projects and site templates: on every
    cluster given (the dev clusters share their Unix users and Slurm accounts), each user
    mapped to their login and each department a project there."""
    if os.environ.get("PORTAL_ENV", "dev") == "prod":
        raise SeedRefused("Refusing to create demo accounts when PORTAL_ENV=prod.")
    names = sorted(clusters) or [DEMO_CLUSTER]
    async with unit_of_work(sessionmaker) as session:
        users = {login: await _upsert_user(session, login, names) for login in DEMO_USERS}
        for account, cluster in itertools.product(DEMO_PROJECTS, names):
            project = await _upsert_project(session, account, cluster, is_first=cluster == names[0])
            for login, (_name, user_account, role) in DEMO_USERS.items():
                if user_account == account and role is not None:
                    await _ensure_membership(session, users[login], project, role)
        await install_site_templates(session, users["admin"])
    return [
        DemoLogin(login, demo_password(login), DEMO_USERS[login][2] or "site admin")
        for login in DEMO_USERS
    ]


async def _main() -> None:
    from app.config import load_cluster_configs, load_settings

    settings = load_settings()
    if settings.is_production:
        raise SystemExit("Refusing to create demo accounts when PORTAL_ENV=prod.")
    engine = create_engine(settings.database_url)
    try:
        logins = await seed_demo(create_sessionmaker(engine), load_cluster_configs(settings))
    finally:
        await engine.dispose()
    print("Demo sign-ins (development only):")
    for demo in logins:
        print(f"  {demo.login:<6} password {demo.password:<11} ({demo.role})")


if __name__ == "__main__":
    asyncio.run(_main())
