"""Files over SFTP on the development clusters, as alice and carol with their own identities."""

from __future__ import annotations

import asyncio
import hashlib
import os
import uuid
from collections.abc import AsyncIterator
from typing import cast

import pytest

from app.scheduler.errors import (
    FileAccessDenied,
    FileExists,
    FileNotFound,
    FolderNotEmpty,
    InvalidFilePath,
    OutsideRoots,
    UploadOutOfStep,
)
from app.scheduler.files import FileStore, file_store_of
from app.scheduler.registry import build_adapter
from app.scheduler.slurm.adapter import SlurmAdapter
from tests.other_schedulers import SCHEDULERS, scheduler_cluster
from tests.slurm_versions import cluster_config, versions

pytestmark = pytest.mark.slurm


# Every Slurm version's cluster, and the PBS and LSF ones: files go over the same SFTP to
# each cluster's login node, whatever its scheduler.
CLUSTERS = [
    *versions(),
    pytest.param("pbs", marks=pytest.mark.pbs),
    pytest.param("lsf", marks=pytest.mark.lsf),
]


@pytest.fixture(scope="module", params=CLUSTERS)
async def adapter(request: pytest.FixtureRequest) -> AsyncIterator[SlurmAdapter]:
    name = str(request.param)
    config = scheduler_cluster(name) if name in SCHEDULERS else cluster_config(name)
    built = build_adapter(config, "ssh")
    yield cast(SlurmAdapter, built)  # every adapter here has the same ``ssh`` and ``files``
    await built.close()


@pytest.fixture
def files(adapter: SlurmAdapter) -> FileStore:
    store = file_store_of(adapter)
    assert store is not None
    return store


@pytest.fixture
async def folder(adapter: SlurmAdapter) -> AsyncIterator[str]:
    """A fresh folder in alice's home, removed with everything in it afterwards."""
    path = f"/home/alice/portal-files-{uuid.uuid4().hex[:8]}"
    await adapter.ssh.run(["mkdir", "-p", path], as_user="alice")
    yield path
    await adapter.ssh.run(["rm", "-rf", "--", path], as_user="alice")


async def pieces(data: bytes, size: int = 1 << 20) -> AsyncIterator[bytes]:
    for start in range(0, len(data), size):
        yield data[start : start + size]


async def upload(files: FileStore, folder: str, name: str, data: bytes) -> None:
    upload_id = uuid.uuid4().hex
    half = len(data) // 2
    assert await files.write_part(folder, upload_id, 0, pieces(data[:half]), "alice") == half
    written = await files.write_part(folder, upload_id, half, pieces(data[half:]), "alice")
    assert written == len(data)
    await files.finish_upload(folder, upload_id, name, len(data), "alice", replace=False)


async def test_roots_start_with_alices_home(files: FileStore) -> None:
    roots = await files.roots("alice")
    assert roots[0].label == "Home"
    assert roots[0].path == "/home/alice"


async def test_upload_in_pieces_then_view_and_stream_back_the_same_bytes(
    files: FileStore, folder: str
) -> None:
    data = os.urandom(3 * 1024 * 1024 + 17)
    await upload(files, folder, "data.bin", data)
    opened = await files.open_file(f"{folder}/data.bin", "alice")
    streamed = b"".join([chunk async for chunk in opened.chunks])
    assert hashlib.sha256(streamed).digest() == hashlib.sha256(data).digest()
    window = await files.read(f"{folder}/data.bin", "alice", offset=10, limit=100)
    assert window.data == data[10:110] and window.size == len(data)
    listing = await files.list_folder(folder, "alice")
    assert [entry.name for entry in listing.entries] == ["data.bin"]  # no part file left


async def test_a_piece_out_of_order_is_refused_and_nothing_appears_until_complete(
    files: FileStore, folder: str
) -> None:
    upload_id = uuid.uuid4().hex
    await files.write_part(folder, upload_id, 0, pieces(b"12345"), "alice")
    with pytest.raises(UploadOutOfStep) as refused:
        await files.write_part(folder, upload_id, 9, pieces(b"x"), "alice")
    assert refused.value.expected_offset == 5
    with pytest.raises(UploadOutOfStep, match="has 5 of its 6 bytes"):
        await files.finish_upload(folder, upload_id, "f.txt", 6, "alice", replace=False)
    with pytest.raises(FileNotFound):
        await files.stat(f"{folder}/f.txt", "alice")
    await files.abort_upload(folder, upload_id, "alice")
    assert (await files.list_folder(folder, "alice")).total == 0


async def test_a_large_folder_is_listed_sorted_page_by_page(
    adapter: SlurmAdapter, files: FileStore, folder: str
) -> None:
    names = [f"f{i:05d}" for i in range(1500)]
    await adapter.ssh.run(["mkdir", f"{folder}/sub", f"{folder}/Zed"], as_user="alice")
    await adapter.ssh.run(
        ["sh", "-c", 'cd "$1" && shift && touch "$@"', "-", folder, *names], as_user="alice"
    )
    first = await files.list_folder(folder, "alice", offset=0, limit=500)
    assert first.total == 1502 and first.next_offset == 500
    assert [entry.name for entry in first.entries[:3]] == ["sub", "Zed", "f00000"]
    last = await files.list_folder(folder, "alice", offset=1500, limit=500)
    assert [entry.name for entry in last.entries] == ["f01498", "f01499"]
    assert last.next_offset is None


async def test_make_rename_and_delete(files: FileStore, folder: str) -> None:
    made = await files.make_folder(f"{folder}/new", "alice")
    assert made.is_folder
    with pytest.raises(FileExists, match="already exists"):
        await files.make_folder(f"{folder}/new", "alice")
    await upload(files, f"{folder}/new", "a.txt", b"hello\n")
    with pytest.raises(FolderNotEmpty, match="is not empty"):
        await files.remove(f"{folder}/new", "alice")
    moved = await files.rename(f"{folder}/new/a.txt", f"{folder}/b.txt", "alice")
    assert moved.path == f"{folder}/b.txt"
    await files.remove(f"{folder}/new", "alice")
    await files.remove(f"{folder}/b.txt", "alice")
    assert (await files.list_folder(folder, "alice")).total == 0
    with pytest.raises(InvalidFilePath, match="control characters"):
        await files.make_folder(f"{folder}/bad\nname", "alice")


async def test_carol_cannot_read_alices_private_file(
    adapter: SlurmAdapter, files: FileStore, folder: str
) -> None:
    await upload(files, folder, "secret.txt", b"for alice only\n")
    await adapter.ssh.run(["chmod", "600", f"{folder}/secret.txt"], as_user="alice")
    with pytest.raises(FileAccessDenied, match="Permission denied"):
        await files.read(f"{folder}/secret.txt", "carol", limit=100)
    with pytest.raises(FileAccessDenied):
        await files.remove(f"{folder}/secret.txt", "carol")


async def test_symlinks_cannot_lead_outside_the_roots(
    adapter: SlurmAdapter, files: FileStore, folder: str
) -> None:
    await adapter.ssh.run(["ln", "-s", "/etc", f"{folder}/etc-link"], as_user="alice")
    await adapter.ssh.run(["ln", "-s", "/etc/hostname", f"{folder}/host"], as_user="alice")
    with pytest.raises(OutsideRoots, match="outside the folders the portal may open"):
        await files.list_folder(f"{folder}/etc-link", "alice")
    with pytest.raises(OutsideRoots):
        await files.read(f"{folder}/host", "alice", limit=10)
    with pytest.raises(OutsideRoots):
        await files.make_folder(f"{folder}/etc-link/new", "alice")
    with pytest.raises(OutsideRoots):
        await files.list_folder("/etc", "alice")
    # Deleting the link removes the link only.
    await files.remove(f"{folder}/etc-link", "alice")
    names = [entry.name for entry in (await files.list_folder(folder, "alice")).entries]
    assert names == ["host"]


async def test_an_idle_sftp_session_serves_the_users_next_request(
    adapter: SlurmAdapter, files: FileStore, folder: str
) -> None:
    await files.list_folder(folder, "alice")
    async with adapter.ssh.sftp("alice") as first:
        pass
    await files.stat(folder, "alice")
    async with adapter.ssh.sftp("alice") as second:
        assert second.client is first.client
        async with adapter.ssh.sftp("alice") as meanwhile:
            assert meanwhile.client is not second.client


async def test_a_named_pipe_is_refused_without_being_opened(
    adapter: SlurmAdapter, files: FileStore, folder: str
) -> None:
    await adapter.ssh.run(["mkfifo", f"{folder}/pipe"], as_user="alice")
    with pytest.raises(InvalidFilePath, match="is a named pipe, not a regular file"):
        await asyncio.wait_for(files.read(f"{folder}/pipe", "alice", limit=10), 10)
    with pytest.raises(InvalidFilePath, match="is a named pipe, not a regular file"):
        await asyncio.wait_for(files.open_file(f"{folder}/pipe", "alice"), 10)


async def test_a_link_planted_as_an_uploads_part_file_is_not_followed(
    adapter: SlurmAdapter, files: FileStore, folder: str
) -> None:
    upload_id = uuid.uuid4().hex
    part = f"{folder}/.portal-upload-{upload_id}.part"
    await adapter.ssh.run(["sh", "-c", 'echo precious > "$1"', "-", f"{folder}/t"], as_user="alice")
    await adapter.ssh.run(["ln", "-s", f"{folder}/t", part], as_user="alice")
    with pytest.raises(InvalidFilePath, match="is a symbolic link, not a regular file"):
        await files.write_part(folder, upload_id, 9, pieces(b"evil"), "alice")
    assert await files.write_part(folder, upload_id, 0, pieces(b"evil"), "alice") == 4
    kept = await files.read(f"{folder}/t", "alice", limit=100)
    assert kept.data == b"precious\n"
