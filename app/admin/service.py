"""User, project and membership management for site administrators; every change is audited."""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from app.audit.service import Origin, record
from app.errors import Conflict, Forbidden, NotFound, ValidationFailed
from app.i18n import _
from app.models.projects import MEMBERSHIP_ROLES, Membership, Project
from app.models.users import User, UserClusterAccount
from app.tokens.service import revoke_all_tokens
from app.users import sessions
from app.users.actor import Actor

_LOGIN = re.compile(r"[a-z][a-z0-9_.-]{0,63}")
_SLURM_NAME = re.compile(r"[a-z_][a-z0-9_.-]{0,63}")


def require_site_admin(actor: Actor) -> None:
    if not actor.is_site_admin:
        raise Forbidden(_("Only site administrators can do that."))


async def _audit(
    session: AsyncSession,
    actor: Actor,
    origin: Origin,
    action: str,
    target: object,
    **details: object,
) -> None:
    kind = type(target).__name__.lower()
    target_id = getattr(target, "id", None)
    address = origin.address
    await record(session, actor.user_id, origin.surface, action, kind, target_id, address, details)


async def _flush_or_conflict(session: AsyncSession, message: str) -> None:
    try:
        async with session.begin_nested():
            await session.flush()
    except IntegrityError as error:
        raise Conflict(message) from error


async def list_users(session: AsyncSession, actor: Actor) -> Sequence[User]:
    require_site_admin(actor)
    return (await session.execute(select(User).order_by(User.login))).scalars().all()


async def get_user(session: AsyncSession, actor: Actor, user_id: int) -> User:
    require_site_admin(actor)
    user = await session.get(User, user_id)
    if user is None:
        raise NotFound()
    return user


async def create_user(
    session: AsyncSession,
    actor: Actor,
    origin: Origin,
    *,
    login: str,
    display_name: str,
    email: str | None = None,
    is_site_admin: bool = False,
) -> User:
    require_site_admin(actor)
    login = login.strip().lower()
    if not _LOGIN.fullmatch(login):
        raise ValidationFailed(fields={"login": _("lower-case letters, digits, . _ - only")})
    if await session.scalar(select(User.id).where(User.login == login)) is not None:
        raise Conflict(_("A user %(login)s already exists.", login=login))
    user = User(
        login=login,
        display_name=display_name.strip() or login,
        email=(email or "").strip() or None,
        is_site_admin=is_site_admin,
    )
    session.add(user)
    await session.flush()
    await _audit(session, actor, origin, "admin.user.create", user, login=login)
    return user


async def set_user_active(
    session: AsyncSession, actor: Actor, origin: Origin, user_id: int, *, is_active: bool
) -> User:
    user = await get_user(session, actor, user_id)
    if user.id == actor.user_id and not is_active:
        raise Conflict(_("You cannot deactivate your own account."))
    user.is_active = is_active
    details: dict[str, object] = {"login": user.login}
    if not is_active:
        # Reactivation must not bring back what was out there when the account was closed.
        await sessions.end_all_for_user(session, user.id)
        details["revoked_tokens"] = await revoke_all_tokens(session, user.id)
    action = "admin.user.activate" if is_active else "admin.user.deactivate"
    await _audit(session, actor, origin, action, user, **details)
    return user


async def set_cluster_username(
    session: AsyncSession,
    actor: Actor,
    origin: Origin,
    user_id: int,
    cluster: str,
    username: str,
    reserved: Collection[str] = (),
) -> User:
    """Map the user to ``username`` on ``cluster``; an empty username removes the mapping.

    ``reserved`` are the cluster's service and system accounts: acting as one of them
    would give a portal user the portal's own powers (or root's), so they are refused.
    """
    user = await get_user(session, actor, user_id)
    username = username.strip()
    if username and not _SLURM_NAME.fullmatch(username):
        raise ValidationFailed(fields={"username": _("not a valid cluster username")})
    if username in reserved:
        message = _(
            "%(username)s is a service or system account on %(cluster)s; map a person's account.",
            username=username,
            cluster=cluster,
        )
        raise ValidationFailed(message, fields={"username": message})
    existing = await session.scalar(
        select(UserClusterAccount).where(
            UserClusterAccount.user_id == user.id, UserClusterAccount.cluster == cluster
        )
    )
    if existing is not None and not username:
        await session.delete(existing)
    elif existing is not None:
        existing.username = username
    elif username:
        session.add(UserClusterAccount(user_id=user.id, cluster=cluster, username=username))
    await _flush_or_conflict(session, f"{username} on {cluster} belongs to another user.")
    action = "admin.user.cluster_username"
    await _audit(session, actor, origin, action, user, cluster=cluster, username=username)
    return user


async def cluster_usernames(session: AsyncSession, user_id: int) -> dict[str, str]:
    rows = await session.execute(
        select(UserClusterAccount.cluster, UserClusterAccount.username).where(
            UserClusterAccount.user_id == user_id
        )
    )
    return {row[0]: row[1] for row in rows.all()}


async def list_projects(session: AsyncSession, actor: Actor) -> Sequence[Project]:
    require_site_admin(actor)
    statement = select(Project).order_by(Project.cluster, Project.name)
    return (await session.execute(statement)).scalars().all()


async def create_project(
    session: AsyncSession,
    actor: Actor,
    origin: Origin,
    *,
    name: str,
    cluster: str,
    slurm_account: str,
    description: str = "",
) -> Project:
    require_site_admin(actor)
    account = slurm_account.strip()
    if not _SLURM_NAME.fullmatch(account):
        raise ValidationFailed(fields={"slurm_account": _("not a valid Slurm account name")})
    if not name.strip():
        raise ValidationFailed(fields={"name": _("required")})
    project = Project(
        name=name.strip(), cluster=cluster, slurm_account=account, description=description
    )
    session.add(project)
    await _flush_or_conflict(
        session,
        _(
            "Account %(account)s on %(cluster)s already has a project.",
            account=account,
            cluster=cluster,
        ),
    )
    await _audit(session, actor, origin, "admin.project.create", project, account=account)
    return project


async def get_project(session: AsyncSession, actor: Actor, project_id: int) -> Project:
    require_site_admin(actor)
    project = await session.get(Project, project_id)
    if project is None:
        raise NotFound()
    return project


async def members_of(session: AsyncSession, project_id: int) -> list[tuple[User, str]]:
    statement = (
        select(User, Membership.role)
        .join(Membership, Membership.user_id == User.id)
        .where(Membership.project_id == project_id)
        .order_by(User.login)
    )
    return [(row[0], row[1]) for row in (await session.execute(statement)).all()]


async def set_membership(
    session: AsyncSession, actor: Actor, origin: Origin, project_id: int, user_id: int, role: str
) -> Membership:
    """Add the user to the project with ``role``, or change their role."""
    project = await get_project(session, actor, project_id)
    user = await get_user(session, actor, user_id)
    if role not in MEMBERSHIP_ROLES:
        raise ValidationFailed(fields={"role": _("member or manager")})
    membership = await session.scalar(
        select(Membership).where(Membership.project_id == project.id, Membership.user_id == user.id)
    )
    if membership is None:
        membership = Membership(project_id=project.id, user_id=user.id, role=role)
        session.add(membership)
    previous = membership.role if membership.id else None
    membership.role = role
    await session.flush()
    await _audit(
        session,
        actor,
        origin,
        "admin.membership.set",
        project,
        user=user.login,
        role=role,
        previous=previous or "",
    )
    return membership


async def remove_membership(
    session: AsyncSession, actor: Actor, origin: Origin, project_id: int, user_id: int
) -> None:
    project = await get_project(session, actor, project_id)
    user = await get_user(session, actor, user_id)
    membership = await session.scalar(
        select(Membership).where(Membership.project_id == project.id, Membership.user_id == user.id)
    )
    if membership is None:
        raise NotFound(_("That user is not a member of the project."))
    await session.delete(membership)
    await session.flush()
    await _audit(session, actor, origin, "admin.membership.remove", project, user=user.login)
