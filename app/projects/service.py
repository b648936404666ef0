"""What an actor may see of projects and their members."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy.ext.asyncio import AsyncSession

from app.errors import Forbidden, NotFound
from app.i18n import _
from app.models.projects import Project
from app.projects import repository
from app.users.actor import Actor


@dataclass(frozen=True, slots=True)
class ProjectView:
    project: Project
    role: str | None

    @property
    def is_manager(self) -> bool:
        return self.role == "manager"


@dataclass(frozen=True, slots=True)
class MemberView:
    user_id: int
    login: str
    display_name: str
    role: str


async def list_for_actor(session: AsyncSession, actor: Actor) -> list[ProjectView]:
    """The active projects the actor belongs to (all projects for a site admin)."""
    if actor.is_site_admin:
        projects = [p for p in await repository.list_all(session) if p.is_active]
    else:
        projects = await repository.list_by_ids(session, actor.project_roles)
    return [ProjectView(p, actor.role_in(p.id)) for p in projects]


async def names_for_filter(session: AsyncSession, actor: Actor) -> list[tuple[int, str]]:
    """(id, name) of the projects whose jobs the actor may see, inactive ones included."""
    if actor.is_site_admin:
        return [(p.id, p.name) for p in await repository.list_all(session)]
    return await repository.names_by_ids(session, actor.project_roles)


async def get(session: AsyncSession, actor: Actor, project_id: int) -> ProjectView:
    project = await repository.get_by_id(session, project_id)
    if project is None or not (actor.is_site_admin or actor.is_member_of(project_id)):
        raise NotFound(_("No such project."))
    return ProjectView(project, actor.role_in(project_id))


async def members(session: AsyncSession, actor: Actor, project_id: int) -> list[MemberView]:
    """Members of a project; only its managers and site admins may see them."""
    view = await get(session, actor, project_id)
    if not (actor.is_site_admin or view.is_manager):
        raise Forbidden(_("Only the project's managers can see its members."))
    return [
        MemberView(user.id, user.login, user.display_name, role)
        for user, role in await repository.list_members(session, project_id)
    ]


async def for_account(
    session: AsyncSession, actor: Actor, cluster: str, account: str
) -> ProjectView:
    """The actor's project billed as ``account`` on ``cluster``."""
    project = await repository.get_by_account(session, cluster, account)
    if project is None or not project.is_active:
        raise NotFound(
            _(
                "No project uses account %(account)s on %(cluster)s.",
                account=account,
                cluster=cluster,
            )
        )
    return await get(session, actor, project.id)
