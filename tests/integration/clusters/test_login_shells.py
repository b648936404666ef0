"""Login shells on the development clusters' login nodes over SSH, as alice with the portal's
certificate for her: her own identity, a window that follows resizes, and a channel that is
closed (and its session slot given back) when the shell is left."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from app.scheduler.errors import PermissionDenied
from app.scheduler.registry import build_adapter
from app.scheduler.slurm.adapter import SlurmAdapter
from app.scheduler.terminals import Terminal, TerminalSize, terminals_of
from tests.slurm_versions import cluster_config, run_on, site_versions, versions

pytestmark = pytest.mark.slurm
WAIT = 30.0


@pytest.fixture(scope="module", params=[*versions(), *site_versions()])
def slurm_version(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture(scope="module")
async def adapter(slurm_version: str) -> AsyncIterator[SlurmAdapter]:
    built = build_adapter(cluster_config(slurm_version), "ssh")
    yield built
    await built.close()


async def printed_until(terminal: Terminal, wanted: bytes) -> bytes:
    seen = b""
    async with asyncio.timeout(WAIT):
        while wanted not in seen:
            data = await terminal.read()
            assert data, f"the shell ended; it printed {seen!r}"
            seen += data
    return seen


async def test_alices_shell_runs_as_alice_on_the_login_node_and_follows_its_window(
    adapter: SlurmAdapter, slurm_version: str
) -> None:
    login_node = run_on(slurm_version, ["hostname"], check=True).stdout.strip()
    terminals = terminals_of(adapter)
    assert terminals is not None
    async with terminals.open("alice", TerminalSize(100, 30)) as terminal:
        # Expanded, so found in what the shell printed, never in the echo of what was typed.
        line = b'echo "host=$(hostname) user=$(id -un) size=$(stty size) done=$((6*7))"\r'
        await terminal.write(line)
        seen = await printed_until(terminal, b"done=42")
        assert f"host={login_node} user=alice size=30 100 done=42".encode() in seen
        terminal.resize(TerminalSize(132, 40))
        await terminal.write(b'echo "size=$(stty size) again=$((6*7))"\r')
        assert b"size=40 132 again=42" in await printed_until(terminal, b"again=42")
    # The channel is closed and the connection's session slot given back.
    [entry] = [e for (cluster, user), e in adapter.ssh._pool.items() if user == "alice"]
    assert entry.active == 0


async def test_exit_ends_the_shell(adapter: SlurmAdapter) -> None:
    terminals = terminals_of(adapter)
    assert terminals is not None
    async with terminals.open("alice", TerminalSize(80, 24)) as terminal:
        await terminal.write(b"exit\r")
        async with asyncio.timeout(WAIT):
            while await terminal.read():
                pass


@pytest.mark.parametrize("user", ["root", "slurm"])
async def test_no_shell_is_opened_as_root_or_the_slurm_user(
    adapter: SlurmAdapter, user: str
) -> None:
    terminals = terminals_of(adapter)
    assert terminals is not None
    with pytest.raises(PermissionDenied):
        async with terminals.open(user, TerminalSize(80, 24)):
            pass
