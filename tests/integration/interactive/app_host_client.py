"""A browser's view of an interactive session's own host, for tests that reach the portal at
127.0.0.1: requests go to the portal's port with the session's Host and that host's cookie."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

import httpx


class AppHost:
    def __init__(self, portal_url: str, host: str, client: httpx.AsyncClient) -> None:
        self.portal_url, self.host, self.client = portal_url, host, client
        self.cookie = ""
        # What else the host set besides its app cookie (where the portal is).
        self.other_cookies: list[str] = []

    @property
    def origin(self) -> str:
        return f"http://{self.host}"

    @property
    def port(self) -> int:
        return int(self.host.rsplit(":", 1)[1])

    async def get(self, target: str, **headers: str) -> httpx.Response:
        return await self.request("GET", target, **headers)

    async def request(
        self, method: str, target: str, json: Any = None, **headers: str
    ) -> httpx.Response:
        sent = {"Host": self.host, **headers}
        if self.cookie:
            sent["Cookie"] = "; ".join([self.cookie, *self.other_cookies])
        url = f"{self.portal_url}{target}"
        return await self.client.request(method, url, headers=sent, json=json)

    async def redeem(self, location: str) -> httpx.Response:
        """Follows the portal's redirect to this host's ticket exchange, keeping its cookie."""
        parts = urlsplit(location)
        answer = await self.get(f"{parts.path}?{parts.query}")
        if answer.status_code == 303:
            app_cookie, *others = answer.headers.get_list("set-cookie")
            self.cookie = app_cookie.split(";")[0]
            self.other_cookies = [cookie.split(";")[0] for cookie in others]
        return answer


async def open_app_host(portal_url: str, browser: httpx.AsyncClient, target: str) -> AppHost:
    """Connect as a browser does: the portal's redirect from ``target`` (a session's path),
    then the ticket's exchange on the session's host."""
    sent = await browser.get(target)
    assert sent.status_code == 303, sent.text
    host = AppHost(portal_url, urlsplit(sent.headers["location"]).netloc, browser)
    redeemed = await host.redeem(sent.headers["location"])
    assert redeemed.status_code == 303, redeemed.text
    return host
