"""Single sign-on against a real OpenID provider (oidc-provider, tests/idp): the round trip,
and every answer the portal must refuse, in plain words (ADR 0028)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from joserfc import jwt
from joserfc.jwk import RSAKey

from app.users.oidc import OidcClient, OidcConfig, SignInRefused
from tests.idp_server import IdentityProvider, portal_client, signing_key
from tests.portal import free_port
from tests.sso_portal import CLIENT_ID, CLIENT_SECRET, provider_answer, running_portal


@dataclass
class World:
    idp: IdentityProvider
    key: dict[str, Any]
    portal: str  # creates users, passwords on
    closed_portal: str  # creates nobody, passwords off


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    folder = tmp_path_factory.mktemp("sso")
    ports = [free_port(), free_port()]
    callbacks = [f"http://127.0.0.1:{port}/signin/sso/callback" for port in ports]
    logouts = [f"http://127.0.0.1:{port}/signin" for port in ports]
    key = signing_key("portal-test-key-1")
    idp = IdentityProvider(folder, [portal_client(callbacks, logouts)], [key]).start()
    try:
        with (
            running_portal(folder / "open", ports[0], idp.issuer) as portal,
            running_portal(
                folder / "closed",
                ports[1],
                idp.issuer,
                oidc_create_users=False,
                password_signin=False,
            ) as closed,
        ):
            yield World(idp=idp, key=key, portal=portal, closed_portal=closed)
    finally:
        idp.stop()


def _browser() -> httpx.Client:
    return httpx.Client(timeout=20, follow_redirects=False)


def test_alice_signs_in_at_the_provider_and_lands_where_she_was_going(world: World) -> None:
    with _browser() as browser:
        callback = provider_answer(browser, world.portal, "alice", "alice-sso-password", "/jobs")
        back = browser.get(callback)
        assert back.status_code == 303, back.text
        assert back.headers["location"] == "/jobs"
        dashboard = browser.get(f"{world.portal}/dashboard")
        assert dashboard.status_code == 200
        assert "alice" in dashboard.text


def test_an_answer_is_accepted_once(world: World) -> None:
    with _browser() as browser:
        callback = provider_answer(browser, world.portal, "bob", "bob-sso-password")
        assert browser.get(callback).status_code == 303
        browser.cookies.clear()
        browser.get(f"{world.portal}/signin")
        replay = browser.get(callback)
    assert replay.status_code == 401
    assert "already used" in replay.text


def test_an_answer_finished_in_another_browser_is_refused(world: World) -> None:
    with _browser() as victim, _browser() as attacker:
        callback = provider_answer(victim, world.portal, "alice", "alice-sso-password")
        # Login CSRF: the attacker hands their own answer to someone else's browser.
        answer = attacker.get(callback, headers={"Accept-Language": "fr"})
    assert answer.status_code == 401
    assert "pas été commencée dans ce navigateur" in answer.text


def test_a_state_the_portal_never_issued_is_refused(world: World) -> None:
    with _browser() as browser:
        provider_answer(browser, world.portal, "alice", "alice-sso-password")
        answer = browser.get(f"{world.portal}/signin/sso/callback?state=forged&code=forged")
    assert answer.status_code == 401
    assert "not started in this browser" in answer.text


def test_someone_new_to_an_open_portal_gets_an_account(world: World) -> None:
    with _browser() as browser:
        callback = provider_answer(browser, world.portal, "zoe", "zoe-sso-password")
        assert browser.get(callback).status_code == 303
        dashboard = browser.get(f"{world.portal}/dashboard")
    assert dashboard.status_code == 200
    assert '<span class="nav-login">zoe</span>' in dashboard.text


def test_a_person_unknown_to_a_closed_portal_is_told_so(world: World) -> None:
    with _browser() as browser:
        callback = provider_answer(browser, world.closed_portal, "zoe", "zoe-sso-password")
        answer = browser.get(callback)
    assert answer.status_code == 403
    assert "has no account for you" in answer.text


def test_a_closed_portal_offers_only_the_provider_and_refuses_passwords(world: World) -> None:
    with _browser() as browser:
        page = browser.get(f"{world.closed_portal}/signin")
        assert "Sign in with Test IdP" in page.text
        assert 'type="password"' not in page.text
        csrf = page.text.split('name="csrf_token" value="')[-1].split('"')[0]
        answer = browser.post(
            f"{world.closed_portal}/signin",
            data={"login": "alice", "password": "alice-demo", "csrf_token": csrf},
        )
    assert answer.status_code == 403


def test_the_provider_down_is_a_plain_page_not_a_500(tmp_path: Path) -> None:
    nobody = f"http://127.0.0.1:{free_port()}"
    with running_portal(tmp_path, free_port(), nobody) as portal, _browser() as browser:
        english = browser.get(f"{portal}/signin/sso")
        french = browser.get(f"{portal}/signin/sso", headers={"Accept-Language": "fr"})
    assert english.status_code == 502
    assert "cannot be reached right now" in english.text
    assert french.status_code == 502
    assert "ne répond pas" in french.text


# The ID token's own checks, on tokens the test signs itself: with the provider's key (so
# only the checked claim is wrong) or with a key the provider never published.


def _client(world: World, clock_skew: int = 60) -> OidcClient:
    config = OidcConfig(
        issuer=world.idp.issuer,
        client_id=CLIENT_ID,
        client_secret=CLIENT_SECRET,
        scopes="openid profile",
        clock_skew=clock_skew,
        timeout=5.0,
    )
    return OidcClient(config)


def _token(world: World, key: dict[str, Any], **claims: Any) -> str:
    now = int(time.time())
    payload = {
        "iss": world.idp.issuer,
        "sub": "sub-alice-0001",
        "aud": CLIENT_ID,
        "iat": now,
        "exp": now + 300,
        "nonce": "the-nonce",
        "preferred_username": "alice",
        **claims,
    }
    header = {"alg": "RS256", "kid": key["kid"]}
    return jwt.encode(header, payload, RSAKey.import_key(key))


async def test_a_token_signed_with_the_providers_key_passes(world: World) -> None:
    claims = await _client(world).verify_id_token(_token(world, world.key), nonce="the-nonce")
    assert claims["preferred_username"] == "alice"


async def test_a_nonce_from_another_sign_in_is_refused(world: World) -> None:
    token = _token(world, world.key, nonce="an-earlier-sign-ins-nonce")
    with pytest.raises(SignInRefused, match="already used or belongs to another sign-in"):
        await _client(world).verify_id_token(token, nonce="the-nonce")


async def test_an_expired_token_is_refused_beyond_the_clock_skew(world: World) -> None:
    now = int(time.time())
    late = _token(world, world.key, iat=now - 600, exp=now - 30)
    # Thirty seconds late is within a minute's skew: clocks differ.
    assert await _client(world).verify_id_token(late, nonce="the-nonce")
    with pytest.raises(SignInRefused, match="has expired"):
        await _client(world, clock_skew=10).verify_id_token(late, nonce="the-nonce")


async def test_a_token_for_another_client_is_refused(world: World) -> None:
    token = _token(world, world.key, aud="some-other-client")
    with pytest.raises(SignInRefused, match="not meant for this portal"):
        await _client(world).verify_id_token(token, nonce="the-nonce")


async def test_a_token_signed_by_an_unknown_key_is_refused_after_one_refetch(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    client = _client(world)
    await client.verify_id_token(_token(world, world.key), nonce="the-nonce")
    fetched: list[str] = []
    original = client._get_json

    async def counted(url: str) -> dict[str, Any]:
        fetched.append(url)
        return await original(url)

    monkeypatch.setattr(client, "_get_json", counted)
    forged = _token(world, signing_key("a-key-nobody-published"))
    with pytest.raises(SignInRefused, match="key the sign-in service does not publish"):
        await client.verify_id_token(forged, nonce="the-nonce")
    with pytest.raises(SignInRefused):
        await client.verify_id_token(forged, nonce="the-nonce")
    # One refetch of the published keys, however many forged tokens follow it.
    assert fetched == [f"{world.idp.issuer}/jwks"]


async def test_keys_rotated_at_the_provider_are_fetched_again(tmp_path: Path) -> None:
    old, new = signing_key("old-key"), signing_key("new-key")
    port = free_port()
    idp = IdentityProvider(tmp_path, [portal_client(["http://127.0.0.1:1/cb"])], [old], port)
    rotated_idp = IdentityProvider(tmp_path, idp.clients, [new, old], port)
    world = World(idp=idp.start(), key=old, portal="", closed_portal="")
    try:
        client = _client(world)
        await client.verify_id_token(_token(world, old), nonce="the-nonce")
        idp.stop()
        rotated_idp.start()
        rotated = await client.verify_id_token(_token(world, new), nonce="the-nonce")
        assert rotated["sub"] == "sub-alice-0001"
    finally:
        rotated_idp.stop()
        idp.stop()
