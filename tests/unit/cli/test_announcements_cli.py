"""``hpcportal announcements list|dismiss`` against a recorded API answer."""

from __future__ import annotations

import httpx
import pytest

from app.cli.client import PortalClient
from app.cli.config import ClientConfig
from app.cli.exit_codes import ExitCode
from app.cli.main import build_parser

CONFIG = ClientConfig(url="http://portal.test", token="hpc_secret")
ITEM = {
    "id": 7,
    "source": "maintenance",
    "text": "testcluster stops for maintenance from 2026-11-28 22:00 UTC to 2026-11-29 04:00 UTC.",
    "shown_until": "2026-11-29T04:00:00Z",
}


def test_listing_asks_for_the_undismissed_ones_and_prints_a_table(
    capsys: pytest.CaptureFixture[str],
) -> None:
    seen: list[httpx.Request] = []

    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, json={"items": [ITEM], "next_cursor": None, "next": None})

    args = build_parser().parse_args(["announcements", "list", "--new"])
    client = PortalClient(CONFIG, transport=httpx.MockTransport(answer))
    assert args.run(client, args) == ExitCode.OK
    assert seen[0].url.path == "/api/v1/announcements"
    assert seen[0].url.params["dismissed"] == "false"
    out = capsys.readouterr().out.splitlines()
    assert out[0].split() == ["ID", "SOURCE", "SHOWN_UNTIL", "TEXT"]
    assert out[1].startswith("7   maintenance  2026-11-29T04:00:00Z  testcluster stops for")


def test_dismissing_posts_to_the_announcement(capsys: pytest.CaptureFixture[str]) -> None:
    seen: list[httpx.Request] = []

    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(204)

    args = build_parser().parse_args(["announcements", "dismiss", "7"])
    client = PortalClient(CONFIG, transport=httpx.MockTransport(answer))
    assert args.run(client, args) == ExitCode.OK
    assert (seen[0].method, seen[0].url.path) == ("POST", "/api/v1/announcements/7/dismiss")
    assert capsys.readouterr().out == "dismissed announcement 7\n"
