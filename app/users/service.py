"""Authentication and the Actor built for each request."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from sqlalchemy.ext.asyncio import AsyncSession

from app.errors import Unauthorized
from app.models import User
from app.security import hash_password, is_password_correct
from app.users import repository, throttle
from app.users.actor import Actor

# Verifying against a real hash when the login is unknown keeps the response time the same,
# so timing does not reveal which logins exist.
_DUMMY_HASH = hash_password("not-a-real-password")
BAD_CREDENTIALS = "That login and password do not match."


class TooManyAttempts(Unauthorized):
    status_code = 429

    def __init__(self, minutes: int) -> None:
        unit = "minute" if minutes == 1 else "minutes"
        super().__init__(f"Too many attempts, try again in {minutes} {unit}.")
        self.minutes = minutes


@dataclass(frozen=True, slots=True)
class SignInRequest:
    login: str
    password: str
    address: str


async def _password_matches(password_hash: str | None, password: str) -> bool:
    # Argon2 takes about a tenth of a second of CPU and releases the GIL: in a thread it
    # no longer stalls every other request of the process during a wave of sign-ins.
    return await asyncio.to_thread(is_password_correct, password_hash, password)


async def authenticate(session: AsyncSession, attempt: SignInRequest) -> User:
    """The user whose login and password match; refuses while throttled.

    Failures are recorded in the caller's transaction, which must be committed even though
    this raises, or throttling never engages.
    """
    login = attempt.login.strip()
    state = await throttle.check(session, login, attempt.address)
    if state.is_blocked:
        raise TooManyAttempts(state.retry_minutes)
    user = await repository.get_by_login(session, login) if login else None
    if user is None or not user.is_active:
        await _password_matches(_DUMMY_HASH, attempt.password)
        await throttle.record_failure(session, login, attempt.address)
        raise Unauthorized(BAD_CREDENTIALS)
    if not await _password_matches(user.password_hash, attempt.password):
        await throttle.record_failure(session, login, attempt.address)
        raise Unauthorized(BAD_CREDENTIALS)
    await throttle.forget_failures(session, login)
    return user


async def user_for_trusted_login(session: AsyncSession, login: str) -> User:
    """The active user a trusted reverse proxy vouched for."""
    user = await repository.get_by_login(session, login.strip())
    if user is None or not user.is_active:
        raise Unauthorized("Your account is not known to the portal; ask an administrator.")
    return user


async def actor_for(session: AsyncSession, user: User) -> Actor:
    roles, usernames = await repository.roles_and_usernames(session, user.id)
    return Actor(
        user_id=user.id,
        login=user.login,
        is_site_admin=user.is_site_admin,
        project_roles=roles,
        cluster_usernames=usernames,
    )


async def cluster_username(session: AsyncSession, actor: Actor, cluster: str) -> str | None:
    """The username ``actor`` runs jobs as on ``cluster``, if they have one there."""
    known = actor.username_on(cluster)
    if known is not None:
        return known
    return await repository.get_cluster_username(session, actor.user_id, cluster)
