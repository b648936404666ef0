import httpx
import pytest
from fastapi import FastAPI

from app.users.throttle import MAX_ADDRESS_FAILURES
from app.web.settings import WebSettings
from tests.integration.web.conftest import csrf_from, sign_in
from tests.world import World


async def _post_signin(client: httpx.AsyncClient, login: str, password: str) -> httpx.Response:
    form = await client.get("/signin")
    data = {"login": login, "password": password, "csrf_token": csrf_from(form.text)}
    return await client.post("/signin", data=data)


async def test_sign_in_sets_a_signed_httponly_lax_cookie(
    client: httpx.AsyncClient, people: World
) -> None:
    response = await _post_signin(client, "alice", "secret-pass")
    assert response.status_code == 303
    assert response.headers["location"] == "/templates"
    cookie = next(h for h in response.headers.get_list("set-cookie") if "portal_session=" in h)
    assert "HttpOnly" in cookie and "SameSite=lax" in cookie and "Secure" not in cookie


async def test_cookie_is_secure_over_https(app: FastAPI, people: World) -> None:
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="https://testserver") as client:
        response = await _post_signin(client, "alice", "secret-pass")
    cookie = next(h for h in response.headers.get_list("set-cookie") if "portal_session=" in h)
    assert "Secure" in cookie


async def test_wrong_password_is_explained_without_saying_which_part(
    client: httpx.AsyncClient, people: World
) -> None:
    response = await _post_signin(client, "alice", "nope")
    assert response.status_code == 401
    assert "That login and password do not match." in response.text
    assert "portal_session" not in response.headers.get("set-cookie", "")


async def test_sixth_failure_within_five_minutes_is_throttled(
    client: httpx.AsyncClient, people: World
) -> None:
    for _ in range(5):
        assert (await _post_signin(client, "alice", "wrong")).status_code == 401
    response = await _post_signin(client, "alice", "secret-pass")
    assert response.status_code == 429
    assert "Too many attempts, try again in 5 minutes." in response.text


async def test_a_right_password_neither_clears_failures_nor_uses_up_the_limit(
    client: httpx.AsyncClient, people: World
) -> None:
    for _ in range(4):
        assert (await _post_signin(client, "alice", "wrong")).status_code == 401
    # Signing in many times costs nothing...
    for _ in range(8):
        assert (await _post_signin(client, "alice", "secret-pass")).status_code == 303
        client.cookies.clear()  # as from another browser
    # ...and gives no fresh five guesses either.
    assert (await _post_signin(client, "alice", "wrong")).status_code == 401
    assert (await _post_signin(client, "alice", "wrong")).status_code == 429


async def test_failures_from_one_address_throttle_other_logins(
    client: httpx.AsyncClient, people: World
) -> None:
    for index in range(MAX_ADDRESS_FAILURES):
        assert (await _post_signin(client, f"x{index}", "wrong")).status_code == 401
    response = await _post_signin(client, "bob", "secret-pass")
    assert response.status_code == 429


async def test_sign_in_without_csrf_token_is_refused(
    client: httpx.AsyncClient, people: World
) -> None:
    await client.get("/signin")
    response = await client.post("/signin", data={"login": "alice", "password": "secret-pass"})
    assert response.status_code == 403


async def test_pages_redirect_to_sign_in_with_the_way_back(client: httpx.AsyncClient) -> None:
    response = await client.get("/templates?scope=mine")
    assert response.status_code == 303
    assert response.headers["location"] == "/signin?next=%2Ftemplates%3Fscope%3Dmine"


async def test_htmx_requests_get_hx_redirect_to_sign_in(client: httpx.AsyncClient) -> None:
    response = await client.get("/templates", headers={"HX-Request": "true"})
    assert response.status_code == 401
    assert response.headers["HX-Redirect"].startswith("/signin")


async def test_next_pointing_elsewhere_is_ignored(client: httpx.AsyncClient, people: World) -> None:
    form = await client.get("/signin")
    data = {
        "login": "alice",
        "password": "secret-pass",
        "csrf_token": csrf_from(form.text),
        "next": "//evil.example/",
    }
    response = await client.post("/signin", data=data)
    assert response.headers["location"] == "/templates"


async def test_session_id_changes_at_sign_in(client: httpx.AsyncClient, people: World) -> None:
    csrf = await sign_in(client, "alice")
    first = client.cookies["portal_session"]
    data = {"login": "alice", "password": "secret-pass", "csrf_token": csrf}
    assert (await client.post("/signin", data=data)).status_code == 303
    second = client.cookies["portal_session"]
    assert first != second
    client.cookies.set("portal_session", first)
    assert (await client.get("/templates")).status_code == 303


async def test_sign_out_ends_the_session_on_the_server(
    client: httpx.AsyncClient, people: World
) -> None:
    csrf = await sign_in(client, "alice")
    old = client.cookies["portal_session"]
    response = await client.post("/signout", data={"csrf_token": csrf})
    assert response.status_code == 303
    client.cookies.set("portal_session", old)
    assert (await client.get("/templates")).status_code == 303


async def test_sign_out_without_csrf_is_refused(client: httpx.AsyncClient, people: World) -> None:
    await sign_in(client, "alice")
    assert (await client.post("/signout")).status_code == 403
    assert (await client.get("/templates")).status_code == 200


def _proxy(*proxies: str) -> WebSettings:
    return WebSettings(trusted_proxy_header="REMOTE_USER", trusted_proxies=proxies)


@pytest.mark.parametrize(
    ("web_settings", "expected"), [(_proxy("127.0.0.1"), 200), (_proxy("10.0.0.1"), 303)]
)
async def test_proxy_header_is_honoured_only_from_trusted_addresses(
    client: httpx.AsyncClient, people: World, expected: int
) -> None:
    response = await client.get("/templates", headers={"REMOTE_USER": "carol"})
    assert response.status_code == expected
    if expected == 200:
        assert "carol" in response.text


@pytest.mark.parametrize("web_settings", [_proxy("127.0.0.1")])
async def test_proxy_signed_in_user_still_needs_csrf(
    client: httpx.AsyncClient, people: World
) -> None:
    headers = {"REMOTE_USER": "carol"}
    page = await client.get("/templates/new", headers=headers)
    refused = await client.post("/templates/new", headers=headers, data={"name": "x"})
    accepted = await client.post(
        "/templates/new",
        headers={**headers, "X-CSRF-Token": csrf_from(page.text)},
        data={"name": "x", "script": "#!/bin/bash\necho hi\n"},
    )
    assert refused.status_code == 403
    assert accepted.status_code == 303
