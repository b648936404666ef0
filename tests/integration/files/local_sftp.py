"""An SSH server with SFTP over a temporary folder, run in a thread of its own, for file tests
that need no cluster: named pipes, links planted where the portal writes, stuck operations.

The server answers a channel's requests one after another, as OpenSSH's sftp-server does, so
a stuck request holds up everything behind it on its channel. Files whose name starts with
``stuck`` take ``HOLD_SECONDS`` to open (until ``release``); those starting with ``secret``
are refused as the login user's permissions would refuse them (the tests run as root, whom
plain file modes do not stop).
"""

from __future__ import annotations

import asyncio
import threading
from dataclasses import replace
from pathlib import Path
from typing import Any

import asyncssh

from app.scheduler.config import ClusterConfig

HOLD_SECONDS = 30.0


class _NoAuth(asyncssh.SSHServer):
    def begin_auth(self, username: str) -> bool:
        return False


class LocalSftpServer:
    """``root`` served over SFTP on 127.0.0.1; ``config`` reaches it as cluster testcluster."""

    def __init__(self, root: Path, keys: Path) -> None:
        self.root = root
        self._keys = keys
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._released: asyncio.Event | None = None
        # Set when an open is held up, for a test to act while it is.
        self.stuck = threading.Event()
        # name -> a file: just before that name is opened, a link to the file replaces it,
        # as a user racing the portal's check would.
        self.swap_on_open: dict[str, Path] = {}
        self._server: Any = None
        self.port = 0

    def _make_server(self) -> type[asyncssh.SFTPServer]:
        chroot, released, stuck = str(self.root), self._released, self.stuck
        swaps = self.swap_on_open
        assert released is not None

        class Server(asyncssh.SFTPServer):
            def __init__(self, chan: asyncssh.SSHServerChannel[bytes]) -> None:
                super().__init__(chan, chroot=chroot)

            async def open(self, path: bytes, pflags: int, attrs: asyncssh.SFTPAttrs) -> object:
                name = path.rsplit(b"/", 1)[-1]
                if name.startswith(b"stuck"):
                    stuck.set()
                    await asyncio.wait_for(released.wait(), HOLD_SECONDS)
                if name.startswith(b"secret"):
                    raise asyncssh.SFTPPermissionDenied("Permission denied")
                swapped = swaps.get(name.decode())
                if swapped is not None:
                    local = Path(self.map_path(path).decode())
                    local.unlink()
                    local.symlink_to(swapped)
                return super().open(path, pflags, attrs)

        return Server

    async def _listen(self) -> None:
        self._released = asyncio.Event()
        key = asyncssh.generate_private_key("ssh-ed25519")
        self._server = await asyncssh.listen(
            "127.0.0.1",
            0,
            server_host_keys=[key],
            server_factory=_NoAuth,
            sftp_factory=self._make_server(),
            allow_scp=False,
        )
        self.port = self._server.sockets[0].getsockname()[1]

    def start(self) -> None:
        self._thread.start()
        asyncio.run_coroutine_threadsafe(self._listen(), self._loop).result(10)

    def release(self) -> None:
        """Let every stuck open go on."""
        assert self._released is not None
        self._loop.call_soon_threadsafe(self._released.set)

    async def _close(self) -> None:
        self._server.close()
        await self._server.wait_closed()
        others = [task for task in asyncio.all_tasks() if task is not asyncio.current_task()]
        for task in others:
            task.cancel()
        await asyncio.gather(*others, return_exceptions=True)

    def stop(self) -> None:
        self.release()
        asyncio.run_coroutine_threadsafe(self._close(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)
        self._loop.close()

    def config(self, **changes: Any) -> ClusterConfig:
        ca, service = self._keys / "ca", self._keys / "service"
        for path in (ca, service):
            if not path.exists():
                asyncssh.generate_private_key("ssh-ed25519").write_private_key(str(path))
        config = ClusterConfig(
            name="testcluster",
            transport="ssh",
            login_host="127.0.0.1",
            login_port=self.port,
            service_user="hpcportal",
            service_key=str(service),
            user_ca_key=str(ca),
            file_roots=("/home",),
        )
        return replace(config, **changes)
