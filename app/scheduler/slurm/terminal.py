"""Terminals over SSH: a login shell with a pseudo-terminal on the user's own pooled connection
to the login node, logged in with the portal's short-lived certificate for that user.

The shell holds one of the connection's ``ssh_max_sessions`` while it is open, as an SFTP
session does, so the user's commands and file operations keep the rest.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import asyncssh

from app.scheduler.errors import SchedulerTimeout, SchedulerUnavailable
from app.scheduler.slurm.ssh import SshTransport
from app.scheduler.terminals import TERMINAL_TYPE, Terminal, TerminalSize

CHUNK = 64 * 1024
# Seconds the login node may take to take in keystrokes, or to close the shell's channel.
WRITE_TIMEOUT = 30.0
CLOSE_TIMEOUT = 5.0
LOST = (asyncssh.Error, OSError, EOFError)


class SshTerminal:
    """One shell's channel: its output and input as bytes, and its window size."""

    def __init__(self, process: Any) -> None:
        self._process = process

    async def read(self) -> bytes:
        try:
            data: bytes = await self._process.stdout.read(CHUNK)
        except LOST as exc:
            raise SchedulerUnavailable(f"the shell's connection was lost: {exc}") from exc
        return data

    async def write(self, data: bytes) -> None:
        try:
            self._process.stdin.write(data)
            await asyncio.wait_for(self._process.stdin.drain(), WRITE_TIMEOUT)
        except TimeoutError:
            raise SchedulerTimeout("the login node did not take the input in time") from None
        except LOST as exc:
            raise SchedulerUnavailable(f"the shell's connection was lost: {exc}") from exc

    def resize(self, size: TerminalSize) -> None:
        # A channel already closed has no window to change.
        with contextlib.suppress(*LOST):
            self._process.change_terminal_size(size.columns, size.rows)

    async def close(self) -> None:
        """Close the channel: sshd hangs up the shell's terminal (SIGHUP to its programs)."""
        with contextlib.suppress(*LOST):
            self._process.close()
        with contextlib.suppress(*LOST, TimeoutError):
            await asyncio.wait_for(self._process.wait_closed(), CLOSE_TIMEOUT)


class SshTerminals:
    """Terminals over the SSH transport's pooled per-user connections."""

    def __init__(self, ssh: SshTransport) -> None:
        self._ssh = ssh

    @asynccontextmanager
    async def open(self, as_user: str, size: TerminalSize) -> AsyncIterator[Terminal]:
        async with self._ssh.session_slot(as_user) as conn:
            try:
                process = await asyncio.wait_for(
                    conn.create_process(
                        term_type=TERMINAL_TYPE,
                        term_size=(size.columns, size.rows),
                        encoding=None,
                        stderr=asyncssh.STDOUT,
                    ),
                    self._ssh.connect_timeout,
                )
            except TimeoutError:
                raise SchedulerTimeout("the login node did not open a shell in time") from None
            except LOST as exc:
                raise SchedulerUnavailable(f"cannot open a shell: {exc}") from exc
            terminal = SshTerminal(process)
            try:
                yield terminal
            finally:
                await terminal.close()
