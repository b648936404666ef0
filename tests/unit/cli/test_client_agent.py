"""The portal tells its own client apart from other API callers by the User-Agent."""

from __future__ import annotations

import httpx

from app.audit.service import api_surface
from app.cli.client import USER_AGENT, PortalClient
from app.cli.config import ClientConfig


def test_every_request_carries_the_cli_user_agent_the_audit_trail_recognises() -> None:
    seen: list[str] = []

    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(request.headers["user-agent"])
        return httpx.Response(200, json={})

    client = PortalClient(
        ClientConfig("http://portal.test", "hpc_x"), transport=httpx.MockTransport(answer)
    )
    client.get("/me")
    client.post("/jobs", {})
    assert seen == [USER_AGENT, USER_AGENT]
    assert api_surface(seen[0]) == "cli"
    assert api_surface("curl/8.0") == "api"
    assert api_surface(None) == "api"
