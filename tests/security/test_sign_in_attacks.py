"""Attacks on sign-in: parallel guessing, forged X-Forwarded-For, unaudited failures.

The live portal trusts 127.0.0.1 as its reverse proxy (PORTAL_TRUSTED_PROXIES); attackers
connect from 127.0.0.2, where their X-Forwarded-For must count for nothing.
"""

from __future__ import annotations

import asyncio
import uuid

import httpx

from app.security import hash_password
from app.users.throttle import MAX_ADDRESS_FAILURES
from tests.portal import PortalProcess
from tests.security.conftest import ATTACKER, PROXY, api_token, csrf_from, run_sql

GUESSES = 30
RIGHT_GUESS = 12


def _target_user(portal: PortalProcess, password: str) -> str:
    login = f"target{uuid.uuid4().hex[:8]}"
    run_sql(
        portal,
        "INSERT INTO users (login, display_name, email, password_hash, is_site_admin, "
        "is_active, created_at) VALUES (:login, 'Target', :email, :hash, false, true, now())",
        login=login,
        email=f"{login}@example.org",
        hash=hash_password(password),
    )
    return login


async def _guess(base_url: str, login: str, password: str, address: str) -> int:
    async with httpx.AsyncClient(base_url=base_url, timeout=120) as client:
        form = await client.get("/signin")
        data = {"login": login, "password": password, "csrf_token": csrf_from(form.text)}
        # Each guess seems to come from its own address, through the trusted proxy, so only
        # the per-login limit can stop them.
        answer = await client.post("/signin", data=data, headers={"X-Forwarded-For": address})
        return answer.status_code


async def _parallel_guesses(base_url: str, login: str) -> list[int]:
    guesses = [
        _guess(
            base_url,
            login,
            "right-password" if index == RIGHT_GUESS else f"wrong-{index}",
            f"198.51.100.{index + 1}",
        )
        for index in range(GUESSES)
    ]
    return list(await asyncio.gather(*guesses))


def test_thirty_parallel_guesses_are_evaluated_at_most_five_times(
    live_portal: PortalProcess,
) -> None:
    login = _target_user(live_portal, "right-password")
    statuses = asyncio.run(_parallel_guesses(live_portal.base_url, login))
    evaluated = [status for status in statuses if status != 429]
    print(f"\n{GUESSES} parallel guesses: evaluated={len(evaluated)} statuses={statuses}")
    # Five wrong passwords at most; the right one, if it came in time, gives its slot back
    # without clearing the failures, so it buys no extra wrong guess.
    assert statuses.count(401) <= 5
    assert statuses.count(303) <= 1
    assert set(statuses) <= {401, 303, 429}
    assert statuses.count(429) >= GUESSES - 6
    # Once the limit is reached the right password is refused too.
    assert asyncio.run(_guess(live_portal.base_url, login, "right-password", "203.0.113.9")) == 429
    failed = run_sql(
        live_portal,
        "SELECT count(*) FROM audit_events WHERE action = 'auth.sign_in_failed' "
        "AND details->>'login' = :login",
        login=login,
    )
    assert failed == [(GUESSES + 1 - statuses.count(303),)]


def _sign_in_from_attacker(portal: PortalProcess, login: str, forged: str) -> httpx.Response:
    transport = httpx.HTTPTransport(local_address=ATTACKER)
    with httpx.Client(base_url=portal.base_url, transport=transport, timeout=60) as client:
        form = client.get("/signin")
        data = {"login": login, "password": "guess", "csrf_token": csrf_from(form.text)}
        return client.post("/signin", data=data, headers={"X-Forwarded-For": forged})


def test_forged_forwarded_for_neither_escapes_the_address_limit_nor_the_audit(
    live_portal: PortalProcess,
) -> None:
    answers = [
        _sign_in_from_attacker(live_portal, f"nobody{index}", f"192.0.2.{index}")
        for index in range(MAX_ADDRESS_FAILURES + 1)
    ]
    assert [a.status_code for a in answers] == [401] * MAX_ADDRESS_FAILURES + [429]
    assert "Too many attempts, try again in 5 minutes." in answers[-1].text
    addresses = run_sql(
        live_portal,
        "SELECT DISTINCT address FROM audit_events WHERE action = 'auth.sign_in_failed' "
        "AND details->>'login' LIKE 'nobody%'",
    )
    assert addresses == [(ATTACKER,)]


def test_forged_forwarded_for_does_not_set_a_tokens_last_used_address(
    live_portal: PortalProcess,
) -> None:
    token = api_token(live_portal, "carol", ["read"])
    transport = httpx.HTTPTransport(local_address=ATTACKER)
    headers = {"Authorization": f"Bearer {token}", "X-Forwarded-For": "192.0.2.77"}
    with httpx.Client(base_url=live_portal.base_url, transport=transport, headers=headers) as api:
        assert api.get("/api/v1/me").status_code == 200
    used = run_sql(
        live_portal,
        "SELECT last_used_ip FROM api_tokens WHERE token_prefix = :prefix",
        prefix=token[:12],
    )
    assert used == [(ATTACKER,)]


def test_a_trusted_proxy_still_reports_the_real_client(live_portal: PortalProcess) -> None:
    token = api_token(live_portal, "carol", ["read"])
    headers = {"Authorization": f"Bearer {token}", "X-Forwarded-For": "192.0.2.1, 203.0.113.5"}
    transport = httpx.HTTPTransport(local_address=PROXY)
    with httpx.Client(base_url=live_portal.base_url, transport=transport, headers=headers) as api:
        assert api.get("/api/v1/me").status_code == 200
    used = run_sql(
        live_portal,
        "SELECT last_used_ip FROM api_tokens WHERE token_prefix = :prefix",
        prefix=token[:12],
    )
    assert used == [("203.0.113.5",)]
