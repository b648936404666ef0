"""The shell's page and WebSocket over real sockets, the cluster's shells faked: who gets a
shell and who is refused, keystrokes, resizes, the idle limit, the site's switch, the per-user
limit, and the audit trail of each shell's start and end."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidStatus

from app.config import Settings
from app.models.audit import AuditEvent
from app.scheduler.errors import PermissionDenied, SchedulerUnavailable
from app.scheduler.fake import FakeScheduler
from app.scheduler.fake_terminals import FakeTerminals
from app.scheduler.registry import SchedulerRegistry
from app.scheduler.terminals import TerminalSize
from app.web import shell_relay
from tests.factories import fake_registry
from tests.i18n_check import english_left
from tests.integration.interactive.test_proxy import serve
from tests.integration.web.conftest import sign_in

WAIT = 10.0


@pytest.fixture
def shell_settings() -> dict[str, Any]:
    return {}


@pytest.fixture
def settings(db_url: str, shell_settings: dict[str, Any]) -> Settings:
    return Settings(
        env="dev", database_url=db_url, clusters_file=None, run_poller_in_web=False,
        **shell_settings,
    )  # fmt: skip


@pytest.fixture
def terminals() -> FakeTerminals:
    return FakeTerminals()


@pytest.fixture
def registry(terminals: FakeTerminals) -> SchedulerRegistry:
    scheduler = FakeScheduler()
    scheduler.terminals = terminals  # type: ignore[attr-defined]
    return fake_registry(scheduler)


@dataclass
class Browser:
    """A signed-in browser on the portal: its HTTP client, cookie and CSRF token."""

    url: str
    client: httpx.AsyncClient
    csrf: str

    @property
    def cookie(self) -> str:
        return f"portal_session={self.client.cookies['portal_session']}"


@pytest.fixture
async def portal(app: FastAPI, world: object) -> AsyncIterator[str]:
    async with serve(app) as port:
        yield f"http://127.0.0.1:{port}"


@asynccontextmanager
async def browser(portal: str, login: str = "alice") -> AsyncIterator[Browser]:
    async with httpx.AsyncClient(base_url=portal, trust_env=False, timeout=WAIT) as client:
        csrf = await sign_in(client, login)
        yield Browser(portal, client, csrf)


@asynccontextmanager
async def socket(
    portal: str, cookie: str | None, origin: str | None = None, cluster: str = "testcluster"
) -> AsyncIterator[ClientConnection]:
    headers = {"Cookie": cookie} if cookie else {}
    address = portal.replace("http://", "ws://") + f"/shell/{cluster}/socket"
    async with connect(
        address,
        additional_headers=headers,
        origin=origin or portal,  # type: ignore[arg-type]
        open_timeout=WAIT,
    ) as connection:
        yield connection


async def hello(connection: ClientConnection, csrf: str, columns: int = 80, rows: int = 24) -> None:
    await connection.send(json.dumps({"csrf": csrf, "columns": columns, "rows": rows}))


async def output_until(connection: ClientConnection, wanted: bytes) -> bytes:
    """Binary frames until their bytes hold ``wanted``."""
    seen = b""
    async with asyncio.timeout(WAIT):
        while wanted not in seen:
            frame = await connection.recv()
            assert isinstance(frame, bytes), frame
            seen += frame
    return seen


async def notice_and_close(connection: ClientConnection) -> tuple[str, int | None]:
    """The text frame that says why the shell ended, and the close code after it."""
    async with asyncio.timeout(WAIT):
        frame = await connection.recv()
        while isinstance(frame, bytes):
            frame = await connection.recv()
        with pytest.raises(ConnectionClosed):
            await connection.recv()
    return frame, connection.close_code


async def eventually(check: Callable[[], bool]) -> None:
    deadline = time.monotonic() + WAIT
    while not check():
        assert time.monotonic() < deadline, "timed out"
        await asyncio.sleep(0.02)


async def shell_events(sessionmaker: async_sessionmaker[AsyncSession]) -> list[AuditEvent]:
    async with sessionmaker() as session:
        query = select(AuditEvent).where(AuditEvent.action.like("shell.%")).order_by(AuditEvent.id)
        return list((await session.scalars(query)).all())


async def test_alices_keystrokes_reach_her_shell_and_its_output_her_page(
    portal: str, terminals: FakeTerminals, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    async with browser(portal) as alice, socket(portal, alice.cookie) as connection:
        await hello(connection, alice.csrf, columns=100, rows=30)
        await connection.send(b"echo hi\r")
        await output_until(connection, b"echo hi\r")
        [terminal] = terminals.opened
        assert (terminal.user, terminal.size) == ("alice", TerminalSize(100, 30))

        await connection.send(json.dumps({"columns": 132, "rows": 40}))
        await connection.send(b"size\r")
        await output_until(connection, b"132x40")
        assert terminal.sizes == [TerminalSize(132, 40)]
        assert not terminal.closed
    # The tab closed: the shell's channel is closed and its end recorded.
    await eventually(lambda: terminal.closed)
    await eventually(lambda: len(terminals.open_now) == 0)
    events = await shell_events(sessionmaker)
    assert [(e.action, e.target_type, e.target_id, e.surface) for e in events] == [
        ("shell.open", "cluster", "testcluster", "web"),
        ("shell.close", "cluster", "testcluster", "web"),
    ]
    assert events[0].details == {"username": "alice"}
    assert events[1].details["ended_by"] == "browser"
    assert events[0].address == "127.0.0.1"
    # Keystrokes are never recorded.
    assert "echo" not in json.dumps([e.details for e in events])


@pytest.mark.parametrize("shell_settings", [{"shell_idle_timeout": 1.0}])
async def test_a_shell_without_input_ends_with_a_message_even_while_it_prints(
    portal: str, terminals: FakeTerminals, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    async with browser(portal) as alice, socket(portal, alice.cookie) as connection:
        await hello(connection, alice.csrf)
        await eventually(lambda: len(terminals.opened) == 1)
        started = time.monotonic()
        terminals.opened[0].say("a program's own output\r\n")
        await connection.send(json.dumps({"columns": 90, "rows": 20}))  # not input
        notice, code = await notice_and_close(connection)
    assert time.monotonic() - started >= 0.9
    assert notice == "The shell was closed after 1 second without input."
    assert code == 1000
    assert terminals.opened[0].closed
    assert (await shell_events(sessionmaker))[-1].details["ended_by"] == "idle"


async def test_exit_in_the_shell_ends_the_page_with_a_message(
    portal: str, terminals: FakeTerminals, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    async with browser(portal) as alice, socket(portal, alice.cookie) as connection:
        await hello(connection, alice.csrf)
        await connection.send(b"exit\r")
        assert await notice_and_close(connection) == ("The shell has ended.", 1000)
    assert (await shell_events(sessionmaker))[-1].details["ended_by"] == "exit"


async def test_a_page_of_another_origin_or_a_visitor_not_signed_in_gets_no_shell(
    portal: str, terminals: FakeTerminals
) -> None:
    async with browser(portal) as alice:
        refused = [
            (alice.cookie, "http://evil.example"),
            (alice.cookie, "http://s-0b0e6f1c9d4e4c398c2e3f1a2b3c4d5e.apps.localhost"),
            (None, portal),
            ("portal_session=forged", portal),
        ]
        for cookie, origin in refused:
            with pytest.raises(InvalidStatus) as refusal:
                async with socket(portal, cookie, origin):
                    pass
            assert refusal.value.response.status_code == 403, origin
    assert terminals.opened == []


async def test_a_first_frame_without_the_pages_csrf_token_opens_nothing(
    portal: str, terminals: FakeTerminals
) -> None:
    async with browser(portal) as alice, socket(portal, alice.cookie) as connection:
        await hello(connection, "forged")
        assert await notice_and_close(connection) == ("This page has expired; reload it.", 1008)
    assert terminals.opened == []


async def test_the_page_has_the_terminal_and_the_navigation_links_to_it(portal: str) -> None:
    async with browser(portal) as alice:
        page = await alice.client.get("/shell/testcluster")
        dashboard = await alice.client.get("/dashboard")
        elsewhere = await alice.client.get("/shell/othercluster")
    assert page.status_code == 200
    assert 'data-socket="/shell/testcluster/socket"' in page.text
    assert f'data-csrf="{alice.csrf}"' in page.text
    assert "Shell on testcluster as alice" in page.text
    policy = page.headers["content-security-policy"]
    nonce = policy.split("'nonce-")[1].split("'")[0]
    assert f"style-src 'self' 'nonce-{nonce}';" in policy
    assert f'nonce="{nonce}"' in page.text
    assert "script-src 'self';" in policy
    assert '/shell/testcluster">Shell</a>' in dashboard.text
    assert elsewhere.status_code == 404


async def test_someone_without_an_account_on_the_cluster_has_no_shell_there(
    portal: str, terminals: FakeTerminals
) -> None:
    async with browser(portal, "admin") as admin:
        page = await admin.client.get("/shell/testcluster")
        dashboard = await admin.client.get("/dashboard")
        with pytest.raises(InvalidStatus) as refusal:
            async with socket(portal, admin.cookie):
                pass
    assert page.status_code == 404
    assert ">Shell</a>" not in dashboard.text
    assert refusal.value.response.status_code == 403
    assert terminals.opened == []


@pytest.mark.parametrize("shell_settings", [{"shell_enabled": False}])
async def test_a_site_that_turned_shells_off_has_no_page_no_link_and_refuses_the_socket(
    portal: str, terminals: FakeTerminals
) -> None:
    async with browser(portal) as alice:
        page = await alice.client.get("/shell/testcluster")
        dashboard = await alice.client.get("/dashboard")
        with pytest.raises(InvalidStatus) as refusal:
            async with socket(portal, alice.cookie):
                pass
    assert page.status_code == 404
    assert dashboard.status_code == 200 and ">Shell</a>" not in dashboard.text
    assert refusal.value.response.status_code == 403
    assert terminals.opened == []


@pytest.mark.parametrize("shell_settings", [{"shell_max_per_user": 1}])
async def test_a_user_has_no_more_shells_open_than_the_site_allows(
    portal: str, terminals: FakeTerminals
) -> None:
    async with browser(portal) as alice, browser(portal, "carol") as carol:
        async with socket(portal, alice.cookie) as first:
            await hello(first, alice.csrf)
            await eventually(lambda: len(terminals.open_now) == 1)
            async with socket(portal, alice.cookie) as second:
                await hello(second, alice.csrf)
                assert await notice_and_close(second) == (
                    "You already have 1 shell open; close it first.",
                    1008,
                )
            # Another user's count is their own.
            async with socket(portal, carol.cookie) as carols:
                await hello(carols, carol.csrf)
                await eventually(lambda: len(terminals.open_now) == 2)
        await eventually(lambda: len(terminals.open_now) == 0)
        # Once hers is closed, alice may open another.
        async with socket(portal, alice.cookie) as third:
            await hello(third, alice.csrf)
            await third.send(b"again\r")
            await output_until(third, b"again")


@pytest.mark.parametrize(
    ("refusal", "words", "code"),
    [
        (SchedulerUnavailable("no route"), "The login node of testcluster did not answer", 1011),
        (PermissionDenied("refused"), "The login node of testcluster refused you.", 1008),
    ],
)
async def test_a_login_node_that_refuses_or_does_not_answer_is_named(
    portal: str,
    terminals: FakeTerminals,
    sessionmaker: async_sessionmaker[AsyncSession],
    refusal: Exception,
    words: str,
    code: int,
) -> None:
    terminals.refusal = refusal
    async with browser(portal) as alice, socket(portal, alice.cookie) as connection:
        await hello(connection, alice.csrf)
        notice, closed_with = await notice_and_close(connection)
    assert notice.startswith(words) and closed_with == code
    assert await shell_events(sessionmaker) == []


@pytest.mark.parametrize("shell_settings", [{"shell_idle_timeout": 1.0}])
async def test_the_page_and_the_shells_end_are_in_french_for_a_french_reader(
    portal: str, terminals: FakeTerminals
) -> None:
    async with browser(portal) as alice:
        alice.client.headers["Accept-Language"] = "fr-CA,fr;q=0.9"
        page = await alice.client.get("/shell/testcluster")
        headers = {"Cookie": alice.cookie, "Accept-Language": "fr-CA,fr;q=0.9"}
        address = portal.replace("http://", "ws://") + "/shell/testcluster/socket"
        async with connect(address, additional_headers=headers, origin=portal) as connection:  # type: ignore[arg-type]
            await hello(connection, alice.csrf)
            notice, _ = await notice_and_close(connection)
    assert english_left(page.text) == []
    assert "Shell sur testcluster en tant que alice" in page.text
    assert 'data-prompt-label="Saisie du terminal"' in page.text
    assert notice == "Le shell a été fermé après 1 seconde sans saisie."


async def test_a_lost_login_node_ends_the_page_with_a_message(
    portal: str, terminals: FakeTerminals, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    async with browser(portal) as alice, socket(portal, alice.cookie) as connection:
        await hello(connection, alice.csrf)
        await eventually(lambda: len(terminals.opened) == 1)
        terminals.opened[0].lose()
        assert await notice_and_close(connection) == (
            "The connection to the login node was lost.",
            1000,
        )
    assert (await shell_events(sessionmaker))[-1].details["ended_by"] == "lost"


async def test_signing_out_elsewhere_closes_the_shell_with_a_message(
    portal: str,
    terminals: FakeTerminals,
    sessionmaker: async_sessionmaker[AsyncSession],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(shell_relay, "SIGN_IN_CHECK_SECONDS", 0.1)
    async with browser(portal) as alice, socket(portal, alice.cookie) as connection:
        await hello(connection, alice.csrf)
        # Several checks pass while she is signed in: the shell stays.
        await asyncio.sleep(0.5)
        await connection.send(b"still here\r")
        await output_until(connection, b"still here")
        signed_out = await alice.client.post("/signout", data={"csrf_token": alice.csrf})
        assert signed_out.status_code == 303
        assert await notice_and_close(connection) == (
            "You are no longer signed in, so the shell was closed.",
            1000,
        )
    assert terminals.opened[0].closed
    assert (await shell_events(sessionmaker))[-1].details["ended_by"] == "signed_out"
