"""Queries about users, their cluster accounts and their project roles."""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from sqlalchemy import BindParameter, String, bindparam, cast, literal, select, union_all, update
from sqlalchemy.ext.asyncio import AsyncSession

from app.models.projects import Membership
from app.models.users import User, UserClusterAccount


async def get_by_id(session: AsyncSession, user_id: int) -> User | None:
    return await session.get(User, user_id)


async def hold_for_update(session: AsyncSession, user_id: int) -> None:
    """Serialise the rest of this transaction with every other one holding the same user.

    For a per-user limit: count and insert after this call, in the same transaction, and no
    two requests of one user can both see room for one more. PostgreSQL locks the user's row
    (``SELECT ... FOR UPDATE``; under READ COMMITTED the count that follows sees what the
    previous holder committed). SQLite has no row locks: a write to the row takes the
    database's single write lock, held to the commit; SQLAlchemy's SQLite driver begins the
    transaction at that first write, so what is read after it is up to date.
    """
    if session.get_bind().dialect.name == "sqlite":
        statement = update(User).where(User.id == user_id).values(id=User.id)
        await session.execute(statement.execution_options(synchronize_session=False))
        return
    await session.execute(select(User.id).where(User.id == user_id).with_for_update())


async def get_by_login(session: AsyncSession, login: str) -> User | None:
    result = await session.execute(select(User).where(User.login == login))
    return result.scalar_one_or_none()


@lru_cache(maxsize=1)
def _roles_and_usernames_query() -> Any:
    """Built once: every authenticated request runs it, and building it cost as much as
    running it. The user is a bound parameter."""
    user: BindParameter[int] = bindparam("user_id")
    memberships = select(
        literal("project").label("kind"),
        cast(Membership.project_id, String).label("key"),
        Membership.role.label("value"),
    ).where(Membership.user_id == user)
    accounts = select(
        literal("cluster").label("kind"),
        UserClusterAccount.cluster.label("key"),
        UserClusterAccount.username.label("value"),
    ).where(UserClusterAccount.user_id == user)
    return union_all(memberships, accounts)


async def roles_and_usernames(
    session: AsyncSession, user_id: int
) -> tuple[dict[int, str], dict[str, str]]:
    """(role per project id, username per cluster) in one round trip.

    Every authenticated request needs both, so the two small lookups share one query.
    """
    roles: dict[int, str] = {}
    usernames: dict[str, str] = {}
    found = await session.execute(_roles_and_usernames_query(), {"user_id": user_id})
    for kind, key, value in found.all():
        if kind == "project":
            roles[int(key)] = value
        else:
            usernames[key] = value
    return roles, usernames


async def get_cluster_username(session: AsyncSession, user_id: int, cluster: str) -> str | None:
    result = await session.execute(
        select(UserClusterAccount.username).where(
            UserClusterAccount.user_id == user_id, UserClusterAccount.cluster == cluster
        )
    )
    return result.scalar_one_or_none()
