"""Create, list, revoke and authenticate personal access tokens.

Only the SHA-256 of a token is stored. A token is found by looking its hash up through the
unique index, so no secret is ever compared byte by byte in Python with an early exit.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy.ext.asyncio import AsyncSession

from app.audit.service import SYSTEM, Origin, record_action
from app.errors import NotFound, Unauthorized, ValidationFailed
from app.i18n import _
from app.models.api_tokens import ApiToken
from app.models.base import utc_now
from app.models.users import User
from app.security import TOKEN_MARKER, hash_token, is_token_hash_match, mint_token
from app.tokens import repository
from app.tokens.scopes import effective_scopes, grantable_scopes, unknown_scopes
from app.users.actor import Actor

MAX_NAME_LENGTH = 100
MAX_LIFETIME_DAYS = 366
# Recording every request would turn each read into a write; a minute is precise enough.
LAST_USED_RESOLUTION = timedelta(minutes=1)


@dataclass(frozen=True, slots=True)
class CreatedToken:
    """A new token; ``secret`` exists only here and is shown to its owner once."""

    token: ApiToken
    secret: str


@dataclass(frozen=True, slots=True)
class TokenIdentity:
    """Who a valid bearer token speaks for, and what it may do right now."""

    user: User
    token: ApiToken
    scopes: frozenset[str]


def is_expired(token: ApiToken, now: datetime) -> bool:
    return token.expires_at is not None and token.expires_at <= now


def is_usable(token: ApiToken, now: datetime) -> bool:
    return token.revoked_at is None and not is_expired(token, now)


def lifetime_problem() -> str:
    return _("Choose between 1 and %(limit)s days.", limit=MAX_LIFETIME_DAYS)


def _rejected() -> Unauthorized:
    # One answer for every failed check, so it never says which one failed.
    return Unauthorized(_("The token is invalid, expired or revoked."))


def _check_request(
    owner: Actor, name: str, scopes: Sequence[str], lifetime_days: int | None
) -> dict[str, str]:
    problems: dict[str, str] = {}
    if not name.strip() or len(name.strip()) > MAX_NAME_LENGTH:
        problems["name"] = _(
            "Give the token a name of 1 to %(limit)s characters.", limit=MAX_NAME_LENGTH
        )
    if not scopes:
        problems["scopes"] = _("Choose at least one scope.")
    elif unknown := unknown_scopes(scopes):
        problems["scopes"] = _("Unknown scope: %(scopes)s.", scopes=", ".join(unknown))
    elif not set(scopes) <= set(grantable_scopes(owner.is_site_admin)):
        problems["scopes"] = _("Only site administrators can create tokens with the admin scope.")
    if lifetime_days is not None and not 1 <= lifetime_days <= MAX_LIFETIME_DAYS:
        problems["expires_in_days"] = lifetime_problem()
    return problems


async def create_token(
    session: AsyncSession,
    owner: Actor,
    *,
    name: str,
    scopes: Iterable[str],
    lifetime_days: int | None,
    now: datetime | None = None,
    origin: Origin = SYSTEM,
) -> CreatedToken:
    """Mint a token for ``owner``; ValidationFailed lists every bad field."""
    scope_list = sorted(set(scopes))
    problems = _check_request(owner, name, scope_list, lifetime_days)
    if problems:
        raise ValidationFailed(_("The token cannot be created."), problems)
    now = now or utc_now()
    minted = mint_token()
    token = ApiToken(
        user_id=owner.user_id,
        name=name.strip(),
        token_prefix=minted.prefix,
        token_hash=minted.hash,
        scopes=scope_list,
        expires_at=now + timedelta(days=lifetime_days) if lifetime_days else None,
        created_at=now,
    )
    await repository.add(session, token)
    await record_action(
        session, owner.user_id, origin, "token.create", ("api_token", token.id), scopes=scope_list
    )
    return CreatedToken(token=token, secret=minted.secret)


async def list_tokens(session: AsyncSession, owner: Actor) -> Sequence[ApiToken]:
    return await repository.list_for_user(session, owner.user_id)


async def revoke_token(
    session: AsyncSession,
    owner: Actor,
    token_id: int,
    now: datetime | None = None,
    *,
    origin: Origin = SYSTEM,
) -> ApiToken:
    """Revoke one of the owner's tokens; revoking twice keeps the first time."""
    token = await repository.get_for_user(session, token_id, owner.user_id)
    if token is None:
        raise NotFound(_("No such token."))
    if token.revoked_at is None:
        token.revoked_at = now or utc_now()
        await session.flush()
        target = ("api_token", token.id)
        await record_action(session, owner.user_id, origin, "token.revoke", target)
    return token


async def authenticate(
    session: AsyncSession, secret: str, now: datetime | None = None
) -> TokenIdentity:
    """The identity behind a bearer token, or Unauthorized (never saying which check failed)."""
    if not secret.startswith(TOKEN_MARKER):
        raise _rejected()
    found = await repository.get_with_owner_by_hash(session, hash_token(secret))
    if found is None:
        raise _rejected()
    token, user = found
    now = now or utc_now()
    usable = is_usable(token, now) and user.is_active
    if not usable or not is_token_hash_match(secret, token.token_hash):
        raise _rejected()
    return TokenIdentity(user, token, effective_scopes(token.scopes, user.is_site_admin))


def use_is_stale(token: ApiToken, now: datetime | None = None) -> bool:
    """Whether this use should be written: the last one recorded is over a minute old.

    Checked on the token as loaded for authentication, so the usual request (a script
    polling with a token used seconds ago) makes no write at all.
    """
    last = token.last_used_at
    return last is None or last < (now or utc_now()) - LAST_USED_RESOLUTION


async def record_use(
    session: AsyncSession, token_id: int, address: str | None, now: datetime | None = None
) -> bool:
    """Remember when and from where a token was last used, at most once a minute."""
    now = now or utc_now()
    return await repository.record_use_if_stale(
        session, token_id, address, now, now - LAST_USED_RESOLUTION
    )


async def revoke_all_tokens(session: AsyncSession, user_id: int) -> int:
    """Revoke every live token of the user (a deactivated account); how many were live."""
    return await repository.revoke_all_for_user(session, user_id, utc_now())
