"""Who an ID token's claims name: found by the configured claim, created when allowed, bound
to the provider's subject at first sign-in (ADR 0028)."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy.ext.asyncio import AsyncSession

from app.errors import Forbidden
from app.users.oidc import SignInRefused
from app.users.sso import UserMapping, user_for_claims
from tests.factories import make_user

ISSUER = "https://sso.example.org/realms/hpc"
OPEN = UserMapping(username_claim="preferred_username", create_users=True)
CLOSED = UserMapping(username_claim="preferred_username", create_users=False)


def _claims(login: str, sub: str, **more: Any) -> dict[str, Any]:
    return {"iss": ISSUER, "sub": sub, "preferred_username": login, **more}


async def test_an_existing_user_is_found_and_bound_to_the_subject(session: AsyncSession) -> None:
    alice = await make_user(session, "alice")
    found = await user_for_claims(session, _claims("alice", "sub-1"), CLOSED)
    assert found.id == alice.id
    assert (found.sso_issuer, found.sso_subject) == (ISSUER, "sub-1")


async def test_a_login_reassigned_at_the_provider_is_refused(session: AsyncSession) -> None:
    await make_user(session, "alice")
    await user_for_claims(session, _claims("alice", "sub-1"), CLOSED)
    with pytest.raises(Forbidden, match="belongs to another person"):
        await user_for_claims(session, _claims("alice", "sub-2"), CLOSED)


async def test_a_new_person_is_created_with_a_verified_email_only(session: AsyncSession) -> None:
    claims = _claims("erin", "sub-9", name="Erin Example", email="erin@example.org")
    erin = await user_for_claims(session, claims, OPEN)
    assert (erin.login, erin.display_name, erin.email) == ("erin", "Erin Example", None)
    assert erin.password_hash is None


async def test_nobody_is_created_when_the_site_says_so(session: AsyncSession) -> None:
    with pytest.raises(Forbidden, match="no account for you"):
        await user_for_claims(session, _claims("erin", "sub-9"), CLOSED)


async def test_a_deactivated_account_stays_out(session: AsyncSession) -> None:
    bob = await make_user(session, "bob")
    bob.is_active = False
    with pytest.raises(Forbidden):
        await user_for_claims(session, _claims("bob", "sub-3"), OPEN)


@pytest.mark.parametrize("login", [None, "", "a b", "x" * 65, "alice\n"])
async def test_a_login_claim_the_portal_cannot_use_is_refused(
    session: AsyncSession, login: object
) -> None:
    claims = {"iss": ISSUER, "sub": "s", "preferred_username": login}
    with pytest.raises(SignInRefused, match="did not say who you are"):
        await user_for_claims(session, claims, OPEN)
