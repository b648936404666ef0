"""Single sign-on through an OpenID Connect provider: the round trip and the portal user it
ends with (ADR 0028).

``begin`` stores the attempt (state, nonce, PKCE verifier) bound to the browser that leaves;
``finish`` takes it back exactly once, has the provider's answer checked (``app.users.oidc``)
and finds, or creates, the portal user named by the configured claim.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from sqlalchemy import delete
from sqlalchemy.ext.asyncio import AsyncSession

from app.errors import Forbidden
from app.i18n import _
from app.models.base import utc_now
from app.models.users import User
from app.models.web_sessions import SsoSignInAttempt
from app.users import repository
from app.users.oidc import OidcClient, SignInRefused

# Long enough to type a password and a second factor at the provider.
ATTEMPT_LIFETIME = timedelta(minutes=10)
# A login the portal can show, put in a URL and compare: no spaces or control characters.
LOGIN = re.compile(r"[A-Za-z0-9._@+-]{1,64}")


@dataclass(frozen=True, slots=True)
class UserMapping:
    """How an ID token names a portal user."""

    username_claim: str
    create_users: bool


@dataclass(frozen=True, slots=True)
class SignedIn:
    user: User
    id_token: str
    next_path: str


def _hash(value: str) -> str:
    return hashlib.sha256(value.encode()).hexdigest()


def _state_mismatch() -> SignInRefused:
    return SignInRefused(
        _("This sign-in was not started in this browser, or it was already used. Sign in again.")
    )


async def begin(
    session: AsyncSession,
    client: OidcClient,
    *,
    browser_secret: str,
    next_path: str,
    redirect_uri: str,
) -> str:
    """The provider's address to send the browser to; the attempt is stored for ``finish``."""
    request = await client.authorization_request(redirect_uri)
    now = utc_now()
    await session.execute(delete(SsoSignInAttempt).where(SsoSignInAttempt.expires_at < now))
    session.add(
        SsoSignInAttempt(
            state_hash=_hash(request.state),
            browser_hash=_hash(browser_secret),
            nonce=request.nonce,
            code_verifier=request.code_verifier,
            next_path=next_path,
            expires_at=now + ATTEMPT_LIFETIME,
        )
    )
    return request.url


async def _take_attempt(session: AsyncSession, state: str) -> SsoSignInAttempt | None:
    """The attempt ``state`` names, deleted in the same statement so it is used once only."""
    statement = (
        delete(SsoSignInAttempt)
        .where(SsoSignInAttempt.state_hash == _hash(state))
        .returning(SsoSignInAttempt)
    )
    found = (await session.execute(statement)).scalar_one_or_none()
    # Deleted now, whatever comes next: a refused answer must not leave a usable state behind.
    await session.commit()
    return found


async def finish(
    session: AsyncSession,
    client: OidcClient,
    *,
    state: str,
    code: str,
    browser_secret: str,
    redirect_uri: str,
    mapping: UserMapping,
) -> SignedIn:
    """The portal user the provider vouched for, once every check has held."""
    attempt = await _take_attempt(session, state) if state else None
    if attempt is None or attempt.expires_at <= utc_now():
        raise _state_mismatch()
    if attempt.browser_hash != _hash(browser_secret):
        raise _state_mismatch()
    identity = await client.exchange(
        code,
        code_verifier=attempt.code_verifier,
        nonce=attempt.nonce,
        redirect_uri=redirect_uri,
    )
    user = await user_for_claims(session, identity.claims, mapping)
    return SignedIn(user=user, id_token=identity.id_token, next_path=attempt.next_path)


def _not_allowed() -> Forbidden:
    return Forbidden(
        _("You signed in at the sign-in service, but this portal has no account for you.")
    )


async def user_for_claims(
    session: AsyncSession, claims: dict[str, Any], mapping: UserMapping
) -> User:
    """The active user the claims name, created when the site allows it."""
    login = claims.get(mapping.username_claim)
    if not isinstance(login, str) or not LOGIN.fullmatch(login):
        raise SignInRefused(
            _("The sign-in service did not say who you are in a way this portal understands.")
        )
    issuer, subject = str(claims["iss"]), str(claims["sub"])
    user = await repository.get_by_login(session, login)
    if user is None:
        if not mapping.create_users:
            raise _not_allowed()
        user = _new_user(login, claims)
        session.add(user)
    if not user.is_active:
        raise _not_allowed()
    if user.sso_subject is None:
        user.sso_issuer, user.sso_subject = issuer, subject
    elif (user.sso_issuer, user.sso_subject) != (issuer, subject):
        raise Forbidden(
            _("This login belongs to another person at the sign-in service. Ask an administrator.")
        )
    await session.flush()
    return user


def _new_user(login: str, claims: dict[str, Any]) -> User:
    name = claims.get("name")
    email = claims.get("email")
    return User(
        login=login,
        display_name=name[:200] if isinstance(name, str) and name.strip() else login,
        email=email[:320] if isinstance(email, str) and claims.get("email_verified") else None,
        password_hash=None,
        # Column defaults apply at the insert; the checks below read these before it.
        is_active=True,
        is_site_admin=False,
    )
