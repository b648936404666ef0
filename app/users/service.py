"""Authentication and the Actor built for each request."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.errors import Unauthorized
from app.i18n import _, ngettext
from app.models.users import User
from app.security import hash_password, is_password_correct
from app.users import repository, throttle
from app.users.actor import Actor

# Verifying against a real hash when the login is unknown keeps the response time the same,
# so timing does not reveal which logins exist.
_DUMMY_HASH = hash_password("not-a-real-password")


def _bad_credentials() -> Unauthorized:
    return Unauthorized(_("That login and password do not match."))


class TooManyAttempts(Unauthorized):
    status_code = 429

    def __init__(self, minutes: int, *, is_site_wide: bool = False) -> None:
        if is_site_wide:
            message = ngettext(
                "Too many failed sign-ins on the portal, try again in %(num)d minute.",
                "Too many failed sign-ins on the portal, try again in %(num)d minutes.",
                minutes,
            )
        else:
            message = ngettext(
                "Too many attempts, try again in %(num)d minute.",
                "Too many attempts, try again in %(num)d minutes.",
                minutes,
            )
        super().__init__(message)
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


async def authenticate(
    session: AsyncSession,
    attempt: SignInRequest,
    *,
    counters: async_sessionmaker[AsyncSession] | None = None,
    site_limit: int = throttle.SITE_LIMIT,
) -> User:
    """The user whose login and password match; refuses while throttled.

    The attempt is counted before the password is checked, in its own committed
    transaction when ``counters`` is given (the web surface), so concurrent guesses are
    counted one after the other.
    """
    login = attempt.login.strip()
    state = await throttle.reserve(session, login, attempt.address, counters, site_limit)
    if state.is_blocked:
        raise TooManyAttempts(state.retry_minutes, is_site_wide=state.is_site_wide)
    user = await repository.get_by_login(session, login) if login else None
    if user is None or not user.is_active:
        await _password_matches(_DUMMY_HASH, attempt.password)
        raise _bad_credentials()
    if not await _password_matches(user.password_hash, attempt.password):
        raise _bad_credentials()
    await throttle.succeeded(session, login, attempt.address, counters)
    return user


async def user_for_trusted_login(session: AsyncSession, login: str) -> User:
    """The active user a trusted reverse proxy vouched for."""
    user = await repository.get_by_login(session, login.strip())
    if user is None or not user.is_active:
        raise Unauthorized(_("Your account is not known to the portal; ask an administrator."))
    return user


async def actor_for(session: AsyncSession, user: User) -> Actor:
    roles, usernames = await repository.roles_and_usernames(session, user.id)
    return Actor(
        user_id=user.id,
        login=user.login,
        is_site_admin=user.is_site_admin,
        project_roles=roles,
        cluster_usernames=usernames,
        locale=user.locale,
        theme=user.theme,
    )


async def set_locale(session: AsyncSession, actor: Actor, locale: str | None) -> None:
    """Save the interface language ``actor`` chose (None: follow the browser)."""
    user = await session.get(User, actor.user_id)
    if user is not None:
        user.locale = locale


async def set_theme(session: AsyncSession, actor: Actor, theme: str | None) -> None:
    """Save the colour scheme ``actor`` chose (None: follow the browser)."""
    user = await session.get(User, actor.user_id)
    if user is not None:
        user.theme = theme


async def cluster_username(session: AsyncSession, actor: Actor, cluster: str) -> str | None:
    """The username ``actor`` runs jobs as on ``cluster``, if they have one there."""
    known = actor.username_on(cluster)
    if known is not None:
        return known
    return await repository.get_cluster_username(session, actor.user_id, cluster)
