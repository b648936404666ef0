"""Helpers to sign in through the pages, as a browser does."""

from __future__ import annotations

import re

import httpx

CSRF_INPUT = re.compile(r'name="csrf_token" value="([^"]+)"')


def csrf_from(html: str) -> str:
    match = CSRF_INPUT.search(html)
    assert match, "page has no CSRF field"
    return match.group(1)


async def sign_in(client: httpx.AsyncClient, login: str, password: str = "secret-pass") -> str:
    """Signs in through the form (as a fresh browser); returns the session's CSRF token."""
    client.cookies.clear()
    form = await client.get("/signin")
    response = await client.post(
        "/signin",
        data={"login": login, "password": password, "csrf_token": csrf_from(form.text)},
    )
    assert response.status_code == 303, response.text
    page = await client.get("/templates")
    return csrf_from(page.text)
