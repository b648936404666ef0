"""Interactive shells on a cluster's login node, as a user: the interface.

A terminal is a login shell with a pseudo-terminal, opened with the user's own identity (for
Slurm, on the user's own SSH connection with the portal's short-lived certificate), so what
the user may do there is what their Unix account may do. Slurm's: app/scheduler/slurm/terminal.py.
"""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

# What the browser's terminal (xterm.js) understands, and what most login shells know.
TERMINAL_TYPE = "xterm-256color"
# Far beyond any screen; a larger size asked for is a mistake or an attack on memory.
MAX_COLUMNS = 1000
MAX_ROWS = 500


@dataclass(frozen=True, slots=True)
class TerminalSize:
    """A terminal's size in character cells, clamped to what a screen can show."""

    columns: int
    rows: int

    @classmethod
    def clamped(cls, columns: int, rows: int) -> TerminalSize:
        return cls(min(max(columns, 1), MAX_COLUMNS), min(max(rows, 1), MAX_ROWS))


@runtime_checkable
class Terminal(Protocol):
    """One open shell: bytes both ways, and its window's size."""

    async def read(self) -> bytes:
        """The next output the shell printed; ``b""`` once it has ended. Raises
        SchedulerUnavailable when the connection to the login node is lost."""
        ...

    async def write(self, data: bytes) -> None:
        """Send keystrokes (or pasted text) to the shell.

        Raises SchedulerTimeout when the login node does not take them in time, and
        SchedulerUnavailable when the connection is gone.
        """
        ...

    def resize(self, size: TerminalSize) -> None:
        """Tell the shell its window changed size (a SIGWINCH for the programs in it)."""
        ...


@runtime_checkable
class Terminals(Protocol):
    """Opens shells on the cluster's login node as a user."""

    def open(self, as_user: str, size: TerminalSize) -> AbstractAsyncContextManager[Terminal]:
        """A login shell as ``as_user``, ended (its channel closed) when the block is left.

        Raises PermissionDenied when the login node refuses the user, SchedulerUnavailable
        or SchedulerTimeout when it cannot be reached, NotSent when the user's connection
        has no session to spare.
        """
        ...


def terminals_of(adapter: object) -> Terminals | None:
    """The adapter's shells, when its cluster offers them."""
    terminals = getattr(adapter, "terminals", None)
    return terminals if isinstance(terminals, Terminals) else None
