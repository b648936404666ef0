"""The terminal interface's pure parts: window sizes are clamped, an adapter's shells are found
through any wrapper, and the fake shell used by the page tests behaves as documented."""

from __future__ import annotations

import pytest

from app.scheduler.fake import FakeScheduler
from app.scheduler.fake_terminals import FakeTerminals
from app.scheduler.terminals import MAX_COLUMNS, MAX_ROWS, TerminalSize, terminals_of


@pytest.mark.parametrize(
    ("asked", "given"),
    [
        ((80, 24), (80, 24)),
        ((0, -5), (1, 1)),
        ((10**9, 10**9), (MAX_COLUMNS, MAX_ROWS)),
    ],
)
def test_a_window_size_is_clamped_to_what_a_screen_can_show(
    asked: tuple[int, int], given: tuple[int, int]
) -> None:
    assert TerminalSize.clamped(*asked) == TerminalSize(*given)


def test_an_adapter_without_shells_offers_none_and_one_with_them_offers_them() -> None:
    scheduler = FakeScheduler()
    assert terminals_of(scheduler) is None
    terminals = FakeTerminals()
    scheduler.terminals = terminals  # type: ignore[attr-defined]
    assert terminals_of(scheduler) is terminals
    scheduler.terminals = "not terminals"  # type: ignore[attr-defined]
    assert terminals_of(scheduler) is None


async def test_the_fake_shell_echoes_says_its_size_and_ends_on_exit() -> None:
    terminals = FakeTerminals()
    async with terminals.open("alice", TerminalSize(80, 24)) as terminal:
        await terminal.write(b"ls\r")
        assert await terminal.read() == b"ls\r"
        terminal.resize(TerminalSize(100, 30))
        await terminal.write(b"size\r")
        assert await terminal.read() == b"size\r"
        assert await terminal.read() == b"\r\n100x30\r\n"
        await terminal.write(b"exit\r")
        assert await terminal.read() == b"exit\r"
        assert await terminal.read() == b""
    assert [t.closed for t in terminals.opened] == [True]
    assert terminals.open_now == []
