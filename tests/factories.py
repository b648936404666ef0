"""Plain async factories for test data: each adds rows, flushes, and returns the model.

They never commit; a test that needs the data visible to other sessions commits itself.
"""

from __future__ import annotations

import itertools
import uuid
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from app.models.interactive import InteractiveSession
from app.models.job_templates import JobTemplate, TemplateVersion
from app.models.jobs import Job
from app.models.projects import Membership, Project
from app.models.users import User, UserClusterAccount
from app.scheduler.base import SchedulerAdapter
from app.scheduler.registry import SchedulerRegistry
from app.users.actor import Actor
from app.users.service import actor_for

DEFAULT_CLUSTER = "testcluster"


def fake_registry(scheduler: SchedulerAdapter, cluster: str = DEFAULT_CLUSTER) -> SchedulerRegistry:
    """A registry whose one cluster is served by ``scheduler``, for ``create_app(registry=)``."""
    return SchedulerRegistry.of({cluster: scheduler})


DEFAULT_SCRIPT = "#!/bin/bash\necho hello\n"
_sequence = itertools.count(1)


def _next() -> int:
    return next(_sequence)


async def seeded_user_and_project(
    session: AsyncSession, login: str = "alice", project: str = "physics"
) -> tuple[User, Project]:
    """A user and a project the demo seed created, looked up by name."""
    user = (await session.scalars(select(User).where(User.login == login))).one()
    found = (await session.scalars(select(Project).where(Project.name == project))).one()
    return user, found


async def make_user(
    session: AsyncSession,
    login: str | None = None,
    *,
    cluster_username: str | None = None,
    cluster: str = DEFAULT_CLUSTER,
    is_site_admin: bool = False,
    is_active: bool = True,
    password_hash: str | None = None,
    email: str | None = None,
) -> User:
    """A user; with ``cluster_username`` also their account on ``cluster``."""
    login = login or f"user{_next()}"
    user = User(
        login=login,
        display_name=login.title(),
        email=email if email is not None else f"{login}@example.org",
        password_hash=password_hash,
        is_site_admin=is_site_admin,
        is_active=is_active,
    )
    if cluster_username is not None:
        user.cluster_accounts.append(UserClusterAccount(cluster=cluster, username=cluster_username))
    session.add(user)
    await session.flush()
    return user


async def make_project(
    session: AsyncSession,
    name: str | None = None,
    *,
    slurm_account: str | None = None,
    cluster: str = DEFAULT_CLUSTER,
    is_active: bool = True,
) -> Project:
    name = name or f"project{_next()}"
    project = Project(
        name=name,
        slurm_account=slurm_account or name.lower(),
        cluster=cluster,
        is_active=is_active,
    )
    session.add(project)
    await session.flush()
    return project


async def add_member(
    session: AsyncSession, user: User, project: Project, *, role: str = "member"
) -> Membership:
    membership = Membership(user_id=user.id, project_id=project.id, role=role)
    session.add(membership)
    await session.flush()
    return membership


async def make_app_session(
    session: AsyncSession,
    owner: User,
    project: Project,
    *,
    state: str = "running",
    **fields: Any,
) -> InteractiveSession:
    """An interactive session of ``owner`` with its job; any other column as a keyword."""
    job = await make_job(session, owner, project, state=state, node_list=fields.pop("node", "c1"))
    row = InteractiveSession(
        uuid=str(uuid.uuid4()),
        owner_user_id=owner.id,
        job_id=job.id,
        app=fields.pop("app", "jupyterlab"),
        values=fields.pop("values", {}),
        **fields,
    )
    session.add(row)
    await session.flush()
    return row


async def make_template(
    session: AsyncSession,
    owner: User,
    *,
    name: str | None = None,
    scope: str = "personal",
    project: Project | None = None,
    script: str = DEFAULT_SCRIPT,
    parameter_schema: dict[str, Any] | None = None,
    defaults: dict[str, Any] | None = None,
) -> JobTemplate:
    """A template with one version (1), which is also its current version."""
    template = JobTemplate(
        name=name or f"template{_next()}",
        scope=scope,
        owner_user_id=owner.id,
        project_id=project.id if project else None,
    )
    session.add(template)
    await session.flush()
    version = TemplateVersion(
        template_id=template.id,
        version=1,
        script=script,
        parameter_schema=parameter_schema or {},
        defaults=defaults or {},
        created_by_user_id=owner.id,
    )
    session.add(version)
    await session.flush()
    template.current_version_id = version.id
    await session.flush()
    return template


async def make_job(
    session: AsyncSession,
    owner: User,
    project: Project,
    *,
    state: str = "pending",
    slurm_job_id: str | None = None,
    name: str | None = None,
    **fields: Any,
) -> Job:
    """A job row; any other Job column can be given as a keyword."""
    job = Job(
        uuid=str(uuid.uuid4()),
        owner_user_id=owner.id,
        project_id=project.id,
        cluster=project.cluster,
        script=fields.pop("script", DEFAULT_SCRIPT),
        name=name or f"job{_next()}",
        state=state,
        slurm_job_id=slurm_job_id,
        **fields,
    )
    session.add(job)
    await session.flush()
    return job


async def as_actor(session: AsyncSession, user: User) -> Actor:
    """The actor services see for ``user``, with the roles stored right now."""
    return await actor_for(session, user)


async def make_array(
    session: AsyncSession,
    owner: User,
    project: Project,
    task_states: dict[int, str],
    **fields: Any,
) -> Job:
    """An array row with one task row per index in ``task_states`` (index → state)."""
    array = await make_job(session, owner, project, **fields)
    shared = {k: v for k, v in fields.items() if k not in ("array_spec", "state", "slurm_job_id")}
    for index, state in task_states.items():
        await make_job(
            session,
            owner,
            project,
            state=state,
            slurm_job_id=f"{array.slurm_job_id}_{index}",
            **(shared | {"array_parent_id": array.id, "array_task_id": index}),
        )
    return array
