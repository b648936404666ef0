"""Disk usage on the development clusters: what the portal shows for dave is what the
cluster's command prints for him, and what is really in his home.

Dave's home is one no other test's jobs write into (alice's grows while other lanes run), so
the three readings can agree."""

from __future__ import annotations

import os
import shutil
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.scheduler.disk_usage import FilesystemUsage
from app.scheduler.registry import SchedulerRegistry
from app.storage.service import DiskUsageService
from app.users.actor import Actor
from tests.slurm_versions import cluster_config, run_on, versions

pytestmark = pytest.mark.slurm

HOME = Path("/home/dave")
KNOWN_SIZE = 3 * 1024 * 1024
# A sign-in or a desktop viewer may still touch it: a reading counts once it is stable.
ATTEMPTS = 5


@pytest.fixture
def written_file() -> Iterator[Path]:
    """A folder of dave's holding a 3 MiB file, removed afterwards."""
    folder = HOME / f"portal-disk-usage-{uuid.uuid4().hex[:8]}"
    folder.mkdir()
    (folder / "data.bin").write_bytes(os.urandom(KNOWN_SIZE))
    owner = HOME.stat()
    for path in (folder, folder / "data.bin"):
        os.chown(path, owner.st_uid, owner.st_gid)
    yield folder
    shutil.rmtree(folder)


def in_home() -> tuple[int, int]:
    """Bytes allocated (each file once, as du) and entries (as find) under dave's home."""
    seen: set[int] = set()
    allocated = entries = 0
    for root, folders, files in os.walk(HOME):
        links = [name for name in folders if os.path.islink(os.path.join(root, name))]
        for path in [root, *(os.path.join(root, name) for name in [*files, *links])]:
            try:
                status = os.lstat(path)
            except FileNotFoundError:
                continue
            entries += 1
            if status.st_ino not in seen:
                seen.add(status.st_ino)
                allocated += status.st_blocks * 512
    return allocated, entries


def printed_home_row(version: str) -> str:
    """The /home row of the command, run as dave where that version's login host is."""
    argv = ["runuser", "-u", "dave", "--", "/usr/local/bin/diskusage_report"]
    result = run_on(version, argv, check=True)
    return next(line for line in result.stdout.splitlines() if "/home (user dave)" in line)


@pytest.mark.parametrize("slurm_version", versions())
async def test_daves_figures_are_what_is_in_his_home_and_what_the_command_prints(
    slurm_version: str, written_file: Path
) -> None:
    config = cluster_config(slurm_version)
    registry = SchedulerRegistry({config.name: config})
    dave = Actor(user_id=1, login="dave", cluster_usernames={config.name: "dave"})
    service = DiskUsageService(registry, cache_seconds=0)
    try:
        for _ in range(ATTEMPTS):
            before = in_home(), printed_home_row(slurm_version)
            shown = await service.disk_usage(dave, config.name)
            if (in_home(), printed_home_row(slurm_version)) == before:
                break
    finally:
        await registry.close()

    home: FilesystemUsage = next(
        fs for fs in shown.filesystems if fs.filesystem.startswith("/home")
    )
    (allocated, entries), row = before
    assert home.raw == row
    assert (home.space.used, home.files.used) == (allocated, entries)
    assert home.space.used >= KNOWN_SIZE
    assert (home.space.limit, home.files.limit) == (2 * 1024**3, 100_000)
