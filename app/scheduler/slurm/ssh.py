"""asyncssh transport: pooled connections per (cluster, user), user certificates, caps.

Users log in with short-lived certificates signed by the cluster's user CA, so the job
runs under their own Unix identity and nothing per-user is stored. Listing commands use
the service identity (``service_user`` + ``service_key``).
"""

from __future__ import annotations

import asyncio
import secrets
import shlex
import time
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
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
from app.scheduler.slurm.commands import check_user


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


class OutputTooLarge(SchedulerError):
    """A command printed more than the transport's output cap."""


class UserCertificates:
    """Mints and caches short-lived SSH user certificates signed by the cluster's CA."""

    def __init__(self, config: ClusterConfig, *, lifetime: int = 300) -> None:
        self._config = config
        self._lifetime = lifetime
        self._ca: Any = None
        self._cache: dict[str, tuple[float, Any, Any]] = {}

    def credentials_for(self, user: str) -> tuple[Any, Any]:
        """Return (private key, certificate) for ``user``; refuses root and the Slurm user."""
        check_user(user)
        if user in self._config.forbidden_users or user == self._config.service_user:
            raise PermissionDenied(f"refusing to mint a login certificate for {user!r}")
        now = time.time()
        cached = self._cache.get(user)
        if cached is not None and cached[0] - 60 > now:
            return cached[1], cached[2]
        if self._ca is None:
            self._ca = asyncssh.read_private_key(self._config.user_ca_key)
        key = asyncssh.generate_private_key("ssh-ed25519")
        # Backdating covers small clock skew between the portal and the login node.
        cert = self._ca.generate_user_certificate(
            key,
            f"hpc-portal:{user}:{secrets.token_hex(4)}",
            principals=[user],
            valid_after=int(now) - 60,
            valid_before=int(now) + self._lifetime,
        )
        self._cache[user] = (now + self._lifetime, key, cert)
        return key, cert


@dataclass(slots=True)
class _Entry:
    conn: Any
    last_used: float
    # The server refuses sessions beyond its MaxSessions; waiting here instead keeps one
    # refused session from costing the connection that carries the others.
    channels: asyncio.Semaphore
    active: int = 0
    # The user's SFTP session, opened on first use and kept for the connection's life.
    sftp: Any = None


class _ChannelClosed(Exception):
    """A command's channel closed without an exit status: its connection went away."""


class SshTransport:
    """Runs argv on the cluster's login host as a user or as the service identity."""

    def __init__(
        self,
        config: ClusterConfig,
        *,
        command_timeout: float = 30.0,
        connect_timeout: float = 10.0,
        idle_timeout: float = 300.0,
        output_cap: int = 64 * 1024 * 1024,
        keepalive: float = 30.0,
    ) -> None:
        self.config = config
        self.command_timeout = command_timeout
        self.connect_timeout = connect_timeout
        self.idle_timeout = idle_timeout
        self.output_cap = output_cap
        self.keepalive = keepalive
        self.certificates = UserCertificates(config)
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
        ``command_timeout``) raises SchedulerTimeout.
        """
        command = shlex.join(argv)
        if as_user is not None and as_user in self.config.reserved_users:
            # A user mapped to the service account would otherwise get its key.
            raise PermissionDenied(f"refusing to act as {as_user!r} for a user")
        user = as_user or self.config.service_user
        for attempt in (1, 2):
            entry = await self._connection(user)
            try:
                return await asyncio.wait_for(
                    self._on_channel(entry, command, stdin), deadline or self.command_timeout
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
                if attempt == 2 or not repeatable:
                    raise SchedulerUnavailable(f"connection lost: {exc}") from exc
        raise AssertionError("unreachable")

    async def _on_channel(self, entry: _Entry, command: str, stdin: str | None) -> CommandResult:
        async with entry.channels:
            entry.active += 1
            try:
                return await self._exec(entry.conn, command, stdin)
            finally:
                entry.active -= 1
                entry.last_used = time.monotonic()

    async def _exec(self, conn: Any, command: str, stdin: str | None) -> CommandResult:
        async with conn.create_process(command, encoding=None) as proc:
            if stdin is not None:
                proc.stdin.write(stdin.encode())
            proc.stdin.write_eof()
            out, err = await asyncio.gather(
                self._read_capped(proc.stdout), self._read_capped(proc.stderr)
            )
            completed = await proc.wait()
        if completed.exit_status is None:
            # Neither a status nor a signal (that would be -1): the channel was torn down,
            # so the output is no verdict on the command.
            raise _ChannelClosed("the session closed before the command reported its status")
        return CommandResult(completed.exit_status, out, err.decode("utf-8", "replace"))

    async def _read_capped(self, stream: Any) -> bytes:
        parts: list[bytes] = []
        size = 0
        # Large reads: a queue of 100,000 jobs is 17 MB of squeue output.
        while chunk := await stream.read(1 << 20):
            size += len(chunk)
            if size > self.output_cap:
                raise OutputTooLarge(f"command output exceeded {self.output_cap} bytes")
            parts.append(chunk)
        return b"".join(parts)

    @asynccontextmanager
    async def sftp(self, as_user: str) -> AsyncIterator[Any]:
        """The user's SFTP session on their pooled connection (asyncssh ``SFTPClient``).

        One session per connection serves every file request of that user: asyncssh
        pipelines requests over it. It holds one of the connection's ``ssh_max_sessions``
        while open, so commands and SFTP together stay within sshd's MaxSessions. The
        connection counts as busy while the caller holds the session, so a long download
        is never evicted as idle; a session found lost is dropped and opened again next time.
        """
        if as_user in self.config.reserved_users:
            raise PermissionDenied(f"refusing to act as {as_user!r} for a user")
        entry = await self._sftp_entry(as_user)
        entry.active += 1
        try:
            yield entry.sftp
        except (asyncssh.SFTPConnectionLost, asyncssh.ConnectionLost, _ChannelClosed) as exc:
            await self._evict((self.config.name, as_user), entry)
            raise SchedulerUnavailable(f"connection lost: {exc}") from exc
        finally:
            entry.active -= 1
            entry.last_used = time.monotonic()

    async def _sftp_entry(self, user: str) -> _Entry:
        for attempt in (1, 2):
            entry = await self._connection(user)
            async with self._locks[(self.config.name, user)]:
                if entry.sftp is not None:
                    return entry
                await entry.channels.acquire()
                try:
                    entry.sftp = await asyncio.wait_for(
                        entry.conn.start_sftp_client(path_errors="surrogateescape"),
                        self.connect_timeout,
                    )
                    return entry
                except (asyncssh.Error, OSError, TimeoutError) as exc:
                    entry.channels.release()
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
