"""asyncssh transport: pooled connections per (cluster, user), caps, timeouts.

Users log in with short-lived certificates signed by the cluster's user CA
(certificates.py). Listing commands use the service identity (``service_user`` +
``service_key``).
"""

from __future__ import annotations

import asyncio
import contextlib
import shlex
import time
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import asyncssh

from app.scheduler.config import ClusterConfig
from app.scheduler.errors import (
    NotSent,
    PermissionDenied,
    SchedulerError,
    SchedulerTimeout,
    SchedulerUnavailable,
)
from app.scheduler.slurm.certificates import UserCertificates
from app.scheduler.slurm.sftp_timed import TimedSftp
from app.scheduler.slurm.ssh_output import Kept, Output, Passed, pump

# SFTP sessions kept open per user between operations; more are opened while operations
# overlap and closed after them, so a user holds few of sshd's MaxSessions when idle.
SFTP_IDLE_KEPT = 1


@dataclass(frozen=True, slots=True)
class CommandResult:
    """Exit status and output of one remote command."""

    exit_status: int
    stdout: bytes
    stderr: str

    @property
    def text(self) -> str:
        """stdout decoded as UTF-8 (invalid bytes replaced)."""
        return self.stdout.decode("utf-8", "replace")


@dataclass(slots=True)
class _Entry:
    conn: Any
    last_used: float
    # The server refuses sessions beyond its MaxSessions; waiting here instead keeps one
    # refused session from costing the connection that carries the others.
    channels: asyncio.Semaphore
    active: int = 0
    # SFTP sessions no operation is using, ready for the next one (at most SFTP_IDLE_KEPT).
    idle_sftp: list[Any] = field(default_factory=list)


@dataclass(slots=True)
class Channel:
    """A direct-tcpip channel's two streams (asyncssh's SSHReader and SSHWriter, bytes)."""

    reader: Any
    writer: Any
    _release: Callable[[], None]
    _closed: bool = False

    def close(self) -> None:
        """Close the channel (once) and give its connection back to idle eviction."""
        if self._closed:
            return
        self._closed = True
        self.writer.close()
        self._release()


class _ChannelClosed(Exception):
    """A command's channel closed without an exit status: its connection went away."""


class SshTransport:
    """Runs argv on the cluster's login host as a user or as the service identity."""

    def __init__(
        self,
        config: ClusterConfig,
        *,
        command_timeout: float | None = None,
        connect_timeout: float = 10.0,
        idle_timeout: float = 300.0,
        output_cap: int = 64 * 1024 * 1024,
        keepalive: float = 30.0,
    ) -> None:
        self.config = config
        self.command_timeout = command_timeout or config.ssh_timeout
        self.sftp_timeout = config.sftp_timeout
        self.connect_timeout = connect_timeout
        self.idle_timeout = idle_timeout
        self.output_cap = output_cap
        self.keepalive = keepalive
        self.certificates = UserCertificates(config)
        # Per process: with N web workers a busy user may hold up to N connections to the
        # login node (ADR 0029); nothing in it needs to agree across processes.
        self._pool: dict[tuple[str, str], _Entry] = {}
        self._locks: dict[tuple[str, str], asyncio.Lock] = {}

    async def run(
        self,
        argv: Sequence[str],
        *,
        as_user: str | None = None,
        stdin: str | None = None,
        deadline: float | None = None,
        repeatable: bool = True,
    ) -> CommandResult:
        """Run ``argv`` (quoted with shlex.join) and return its status and output.

        ``as_user=None`` means the service identity. A pooled connection found closed
        before the command started is replaced and the command sent again. A connection
        lost while the command ran is replaced and the command repeated only when
        ``repeatable``: a lost sbatch may have submitted, so its outcome is left to
        reconciliation (SchedulerUnavailable). Exceeding ``deadline`` seconds (default
        ``command_timeout``) raises SchedulerTimeout. Output beyond ``output_cap`` raises
        OutputTooLarge.
        """
        return await self._attempts(
            argv, as_user, stdin, deadline, lambda: Kept(self.output_cap), lambda: repeatable
        )

    async def stream(
        self,
        argv: Sequence[str],
        consume: Callable[[bytes], None],
        *,
        stdin: str | None = None,
        deadline: float | None = None,
    ) -> CommandResult:
        """``run`` as the service identity for a listing read as it comes: each piece of
        stdout goes to ``consume`` and is not kept (the result's stdout is empty), so no
        cap applies but what ``consume`` keeps. Sent again on a fresh connection only
        while nothing has been consumed."""
        passed = Passed(consume)
        return await self._attempts(
            argv, None, stdin, deadline, lambda: passed, lambda: passed.size == 0
        )

    async def _attempts(
        self,
        argv: Sequence[str],
        as_user: str | None,
        stdin: str | None,
        deadline: float | None,
        output: Callable[[], Output],
        repeatable: Callable[[], bool],
    ) -> CommandResult:
        command = shlex.join(argv)
        if as_user is not None and as_user in self.config.reserved_users:
            # A user mapped to the service account would otherwise get its key.
            raise PermissionDenied(f"refusing to act as {as_user!r} for a user")
        user = as_user or self.config.service_user
        for attempt in (1, 2):
            entry = await self._connection(user)
            try:
                return await asyncio.wait_for(
                    self._on_channel(entry, command, stdin, output()),
                    deadline or self.command_timeout,
                )
            except TimeoutError:
                raise SchedulerTimeout(f"{argv[0]} did not finish in time") from None
            except asyncssh.ChannelOpenError as exc:
                # Refused before the command started, so it is safe to send again.
                if entry.conn.is_closed():
                    await self._evict((self.config.name, user), entry)
                if attempt == 2:
                    hint = "is sshd's MaxSessions below ssh_max_sessions?"
                    raise NotSent(f"cannot open a session ({hint}): {exc}") from exc
            except (asyncssh.Error, OSError, _ChannelClosed) as exc:
                await self._evict((self.config.name, user), entry)
                if attempt == 2 or not repeatable():
                    raise SchedulerUnavailable(f"connection lost: {exc}") from exc
        raise AssertionError("unreachable")

    async def _on_channel(
        self, entry: _Entry, command: str, stdin: str | None, output: Output
    ) -> CommandResult:
        async with entry.channels:
            entry.active += 1
            try:
                return await self._exec(entry.conn, command, stdin, output)
            finally:
                entry.active -= 1
                entry.last_used = time.monotonic()

    async def _exec(
        self, conn: Any, command: str, stdin: str | None, output: Output
    ) -> CommandResult:
        async with conn.create_process(command, encoding=None) as proc:
            if stdin is not None:
                proc.stdin.write(stdin.encode())
            proc.stdin.write_eof()
            errors = Kept(self.output_cap)
            await asyncio.gather(pump(proc.stdout, output), pump(proc.stderr, errors))
            completed = await proc.wait()
        if completed.exit_status is None:
            # Neither a status nor a signal (that would be -1): the channel was torn down,
            # so the output is no verdict on the command.
            raise _ChannelClosed("the session closed before the command reported its status")
        stderr = errors.value().decode("utf-8", "replace")
        return CommandResult(completed.exit_status, output.value(), stderr)

    @asynccontextmanager
    async def sftp(self, as_user: str) -> AsyncIterator[TimedSftp]:
        """An SFTP session of the user's own for one operation, each request under
        ``sftp_timeout`` (``TimedSftp``).

        sftp-server answers a session's requests in turn, so operations never share one:
        a stuck request (a named pipe, a hung file system) holds up its own operation only.
        A session comes back for the next operation when this one ended cleanly; after a
        timeout, a lost connection or a cancellation it is closed instead. Each open session
        holds one of the connection's ``ssh_max_sessions``, so commands and SFTP together
        stay within sshd's MaxSessions; the connection counts as busy meanwhile, so a long
        download is never evicted as idle.
        """
        if as_user in self.config.reserved_users:
            raise PermissionDenied(f"refusing to act as {as_user!r} for a user")
        entry, client = await self._sftp_session(as_user)
        entry.active += 1
        reusable = False
        try:
            yield TimedSftp(client, self.sftp_timeout)
            reusable = True
        except (asyncssh.SFTPConnectionLost, asyncssh.ConnectionLost, _ChannelClosed) as exc:
            await self._evict((self.config.name, as_user), entry)
            raise SchedulerUnavailable(f"connection lost: {exc}") from exc
        except SchedulerTimeout:
            raise
        except (SchedulerError, asyncssh.SFTPError):
            # A refusal (no such file, permission denied, outside the roots): the session
            # answered and is fine.
            reusable = True
            raise
        finally:
            entry.active -= 1
            entry.last_used = time.monotonic()
            self._put_back(entry, client, reusable)

    async def open_channel(self, host: str, port: int, as_user: str) -> Channel:
        """A TCP connection from the login node to ``host:port`` (an SSH direct-tcpip channel
        on the user's own connection), so the portal needs no route to that host. The
        connection counts as busy until the channel is closed (``Channel.close``).

        Raises SchedulerUnavailable when sshd or the host refuses it.
        """
        if as_user in self.config.reserved_users:
            raise PermissionDenied(f"refusing to act as {as_user!r} for a user")
        entry = await self._connection(as_user)
        try:
            reader, writer = await asyncio.wait_for(
                entry.conn.open_connection(host, port), self.connect_timeout
            )
        except (asyncssh.Error, OSError, TimeoutError) as exc:
            if entry.conn.is_closed():
                await self._evict((self.config.name, as_user), entry)
            raise SchedulerUnavailable(
                f"cannot reach {host}:{port} from the login node: {exc}"
            ) from exc
        entry.active += 1

        def release() -> None:
            entry.active -= 1
            entry.last_used = time.monotonic()

        return Channel(reader, writer, release)

    @asynccontextmanager
    async def session_slot(self, as_user: str) -> AsyncIterator[Any]:
        """The user's connection with one of its ``ssh_max_sessions`` held for a long-lived
        session channel (a terminal) opened on it in the block; busy, so never evicted."""
        if as_user in self.config.reserved_users:
            raise PermissionDenied(f"refusing to act as {as_user!r} for a user")
        entry = await self._connection(as_user)
        try:
            await asyncio.wait_for(entry.channels.acquire(), self.connect_timeout)
        except TimeoutError:
            raise NotSent("every session of this connection stayed busy") from None
        entry.active += 1
        try:
            yield entry.conn
        finally:
            entry.active -= 1
            entry.last_used = time.monotonic()
            entry.channels.release()

    def _put_back(self, entry: _Entry, client: Any, reusable: bool) -> None:
        if reusable and len(entry.idle_sftp) < SFTP_IDLE_KEPT and not entry.conn.is_closed():
            entry.idle_sftp.append(client)
            return
        # A session on a connection already gone may refuse to close: it is gone too.
        with contextlib.suppress(asyncssh.Error, OSError):
            client.exit()
        entry.channels.release()

    async def _sftp_session(self, user: str) -> tuple[_Entry, Any]:
        for attempt in (1, 2):
            entry = await self._connection(user)
            if entry.idle_sftp:
                return entry, entry.idle_sftp.pop()
            try:
                await asyncio.wait_for(entry.channels.acquire(), self.sftp_timeout)
            except TimeoutError:
                raise SchedulerTimeout("every session of this connection stayed busy") from None
            try:
                client = await asyncio.wait_for(
                    entry.conn.start_sftp_client(path_errors="surrogateescape"),
                    self.connect_timeout,
                )
                return entry, client
            except BaseException as exc:
                # Cancelled too: the slot must come back, or the connection loses it for good.
                entry.channels.release()
                if not isinstance(exc, (asyncssh.Error, OSError, TimeoutError)):
                    raise
                if entry.conn.is_closed() or not isinstance(exc, asyncssh.ChannelOpenError):
                    await self._evict((self.config.name, user), entry)
                if attempt == 2:
                    raise SchedulerUnavailable(f"cannot start SFTP: {exc}") from exc
        raise AssertionError("unreachable")

    async def _connection(self, user: str) -> _Entry:
        key = (self.config.name, user)
        await self._evict_idle()
        lock = self._locks.setdefault(key, asyncio.Lock())
        async with lock:
            entry = self._pool.get(key)
            if entry is None or entry.conn.is_closed():
                channels = asyncio.Semaphore(self.config.ssh_max_sessions)
                entry = _Entry(await self._connect(user), time.monotonic(), channels)
                self._pool[key] = entry
            entry.last_used = time.monotonic()
            return entry

    async def _connect(self, user: str) -> Any:
        if user == self.config.service_user:
            client_keys: Any = [asyncssh.read_private_key(self.config.service_key)]
        else:
            client_keys = [self.certificates.credentials_for(user)]
        try:
            return await asyncio.wait_for(
                asyncssh.connect(
                    self.config.login_host,
                    port=self.config.login_port,
                    username=user,
                    client_keys=client_keys,
                    known_hosts=self.config.known_hosts or None,
                    agent_path=None,
                    keepalive_interval=self.keepalive,
                ),
                self.connect_timeout,
            )
        except asyncssh.PermissionDenied as exc:
            raise PermissionDenied(f"login as {user} refused: {exc.reason}") from exc
        except (OSError, asyncssh.Error, TimeoutError) as exc:
            raise NotSent(f"cannot reach {self.config.login_host}: {exc}") from exc

    async def _evict(self, key: tuple[str, str], entry: _Entry) -> None:
        # Only this entry: another command may already have replaced it in the pool.
        if self._pool.get(key) is entry:
            del self._pool[key]
        entry.conn.close()

    async def _evict_idle(self) -> None:
        cutoff = time.monotonic() - self.idle_timeout
        idle = [(k, e) for k, e in self._pool.items() if e.last_used < cutoff and not e.active]
        for key, entry in idle:
            await self._evict(key, entry)

    @property
    def open_connections(self) -> int:
        """How many pooled connections are open."""
        return len(self._pool)

    async def close(self) -> None:
        """Close every pooled connection."""
        entries = list(self._pool.values())
        self._pool.clear()
        for entry in entries:
            entry.conn.close()
        for entry in entries:
            await entry.conn.wait_closed()
