"""Compare Slurm's associations with the portal's projects and memberships, and apply only
the differences an administrator confirmed. Nothing in the portal is overwritten silently."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass

from sqlalchemy import delete, select
from sqlalchemy.ext.asyncio import AsyncSession

from app.admin import service
from app.admin.associations import SlurmState
from app.audit.service import Origin
from app.models.base import utc_now
from app.models.projects import Membership, Project
from app.models.usage import AssociationLimit
from app.models.users import User, UserClusterAccount
from app.users.actor import Actor

# Kinds an administrator can apply; the others are only reported.
APPLICABLE = frozenset({"project_missing", "member_missing", "member_not_in_slurm", "role_differs"})


@dataclass(frozen=True, slots=True)
class Difference:
    kind: str
    account: str
    username: str = ""
    slurm_role: str = ""
    portal_role: str = ""

    @property
    def key(self) -> str:
        return f"{self.kind}:{self.account}:{self.username}"

    @property
    def can_apply(self) -> bool:
        return self.kind in APPLICABLE


@dataclass(frozen=True, slots=True)
class PortalState:
    """Projects' accounts, the members by username with roles, and known usernames."""

    members: Mapping[str, Mapping[str, str]]
    usernames: Collection[str]


def _slurm_role(state: SlurmState, account: str, user: str) -> str:
    return "manager" if user in state.coordinators.get(account, set()) else "member"


def _account_differences(state: SlurmState, portal: PortalState, account: str) -> list[Difference]:
    found = []
    members = portal.members[account]
    for user in sorted(state.users_of(account)):
        wanted = _slurm_role(state, account, user)
        if user not in portal.usernames:
            found.append(Difference("unknown_user", account, user, wanted))
        elif user not in members:
            found.append(Difference("member_missing", account, user, wanted))
        elif members[user] != wanted:
            found.append(Difference("role_differs", account, user, wanted, members[user]))
    for user, role in sorted(members.items()):
        if user not in state.users_of(account):
            found.append(Difference("member_not_in_slurm", account, user, "", role))
    return found


def differences(state: SlurmState, portal: PortalState) -> list[Difference]:
    """Everything that differs, in a stable order; pure, so it is table-tested."""
    found: list[Difference] = []
    slurm_accounts = state.accounts()
    for account in sorted(slurm_accounts - set(portal.members)):
        found.append(Difference("project_missing", account))
        found += [
            Difference("member_missing", account, user, _slurm_role(state, account, user))
            for user in sorted(state.users_of(account))
            if user in portal.usernames
        ]
    for account in sorted(set(portal.members) - slurm_accounts):
        found.append(Difference("project_not_in_slurm", account))
    for account in sorted(slurm_accounts & set(portal.members)):
        found += _account_differences(state, portal, account)
    return found


async def portal_state(session: AsyncSession, cluster: str) -> PortalState:
    projects = (await session.execute(select(Project).where(Project.cluster == cluster))).scalars()
    members: dict[str, dict[str, str]] = {project.slurm_account: {} for project in projects}
    rows = await session.execute(
        select(Project.slurm_account, UserClusterAccount.username, Membership.role)
        .join(Membership, Membership.project_id == Project.id)
        .join(
            UserClusterAccount,
            (UserClusterAccount.user_id == Membership.user_id)
            & (UserClusterAccount.cluster == cluster),
        )
        .where(Project.cluster == cluster)
    )
    for account, username, role in rows.all():
        members[account][username] = role
    names = await session.execute(
        select(UserClusterAccount.username).where(UserClusterAccount.cluster == cluster)
    )
    return PortalState(members, set(names.scalars()))


async def preview(
    session: AsyncSession, actor: Actor, cluster: str, state: SlurmState
) -> list[Difference]:
    service.require_site_admin(actor)
    await store_limits(session, cluster, state)
    return differences(state, await portal_state(session, cluster))


async def store_limits(session: AsyncSession, cluster: str, state: SlurmState) -> None:
    """Replace the cluster's GrpTRESMins limits with what Slurm has now."""
    await session.execute(delete(AssociationLimit).where(AssociationLimit.cluster == cluster))
    now = utc_now()
    for assoc in state.associations:
        for tres, minutes in assoc.limits.items():
            session.add(
                AssociationLimit(
                    cluster=cluster,
                    account=assoc.account,
                    user_name=assoc.user,
                    tres=tres,
                    minutes=minutes,
                    fetched_at=now,
                )
            )
    await session.flush()


async def apply(
    session: AsyncSession,
    actor: Actor,
    origin: Origin,
    cluster: str,
    state: SlurmState,
    confirmed: Collection[str],
) -> list[Difference]:
    """Apply the confirmed differences that still exist; returns what was applied."""
    service.require_site_admin(actor)
    current = differences(state, await portal_state(session, cluster))
    chosen = [d for d in current if d.key in set(confirmed) and d.can_apply]
    for difference in sorted(chosen, key=lambda d: d.kind != "project_missing"):
        await _apply_one(session, actor, origin, cluster, difference)
    return chosen


async def _apply_one(
    session: AsyncSession, actor: Actor, origin: Origin, cluster: str, difference: Difference
) -> None:
    if difference.kind == "project_missing":
        await service.create_project(
            session,
            actor,
            origin,
            name=difference.account,
            cluster=cluster,
            slurm_account=difference.account,
        )
        return
    project_id = await session.scalar(
        select(Project.id).where(
            Project.cluster == cluster, Project.slurm_account == difference.account
        )
    )
    user_id = await session.scalar(
        select(User.id)
        .join(UserClusterAccount, UserClusterAccount.user_id == User.id)
        .where(
            UserClusterAccount.cluster == cluster,
            UserClusterAccount.username == difference.username,
        )
    )
    if project_id is None or user_id is None:
        return
    if difference.kind == "member_not_in_slurm":
        await service.remove_membership(session, actor, origin, project_id, user_id)
    else:
        role = difference.slurm_role
        await service.set_membership(session, actor, origin, project_id, user_id, role)
