"""The first site administrator, made by an operator on the portal's host (``python -m
app.manage create-admin``): a new site has no administrator to make one through the pages."""

from __future__ import annotations

import re
from dataclasses import dataclass

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from app.audit.service import SYSTEM, record_action
from app.models.users import User
from app.security import hash_password

LOGIN = re.compile(r"[a-z][a-z0-9_.-]{0,63}")
MIN_PASSWORD = 12


class BadAdmin(ValueError):
    """The login or password given cannot make an administrator; the message says why."""


@dataclass(frozen=True, slots=True)
class Made:
    user: User
    created: bool


async def ensure_site_admin(
    session: AsyncSession, login: str, display_name: str, password: str | None
) -> Made:
    """Make ``login`` a site administrator, creating the account if there is none.

    ``password`` None leaves an existing password alone (and a new account without one: it
    signs in through single sign-on or the trusted header)."""
    login = login.strip().lower()
    if not LOGIN.fullmatch(login):
        raise BadAdmin(f"{login!r}: a login is lower-case letters, digits and . _ - only")
    if password is not None and len(password) < MIN_PASSWORD:
        raise BadAdmin(f"the password must have at least {MIN_PASSWORD} characters")
    user = await session.scalar(select(User).where(User.login == login))
    created = user is None
    if user is None:
        user = User(login=login, display_name=display_name.strip() or login)
        session.add(user)
    user.is_site_admin = True
    user.is_active = True
    if password is not None:
        user.password_hash = hash_password(password)
    await session.flush()
    action = "admin.user.create" if created else "admin.user.promote"
    await record_action(session, None, SYSTEM, action, ("user", user.id), login=login)
    return Made(user, created)
