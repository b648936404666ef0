"""Files a user can plant to hurt the portal: named pipes and sockets, a link in place of an
upload's part file, a file they may not read, an operation that never ends. Served by a local
SFTP server (``local_sftp``), through the pages and the API."""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import stat
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import httpx
import pytest
from sqlalchemy.ext.asyncio import AsyncSession

from app.scheduler.config import ClusterConfig
from app.scheduler.registry import SchedulerRegistry, build_adapter
from tests.factories import fake_registry
from tests.integration.api.conftest import issue_token
from tests.integration.files.local_sftp import LocalSftpServer
from tests.integration.web.conftest import sign_in
from tests.world import World

FILES = "/api/v1/files/testcluster"
HOME = "/home/alice"
# Well past what an answered request takes, well short of the operation timeouts.
PROMPT = 5.0


@pytest.fixture
def server(tmp_path: Path) -> Iterator[LocalSftpServer]:
    root = tmp_path / "fs"
    (root / HOME.lstrip("/")).mkdir(parents=True)
    (tmp_path / "keys").mkdir()
    served = LocalSftpServer(root, tmp_path / "keys")
    served.start()
    yield served
    # A pipe opened by the old code would hold the server's thread: give it a writer.
    for pipe in (root / HOME.lstrip("/")).glob("pipe*"):
        with contextlib.suppress(OSError):
            os.close(os.open(pipe, os.O_WRONLY | os.O_NONBLOCK))
    served.stop()


@pytest.fixture
def cluster(server: LocalSftpServer, request: pytest.FixtureRequest) -> ClusterConfig:
    """The cluster's entry; a test changes keys with ``indirect`` parametrization."""
    return server.config(**getattr(request, "param", {}))


@pytest.fixture
def registry(cluster: ClusterConfig) -> SchedulerRegistry:
    return fake_registry(build_adapter(cluster, "ssh"))


@pytest.fixture
async def alice(
    client: httpx.AsyncClient, world: World, session: AsyncSession
) -> AsyncIterator[dict[str, str]]:
    """alice's API headers."""
    yield await issue_token(session, world.alice)


def home(server: LocalSftpServer, name: str) -> Path:
    return server.root / HOME.lstrip("/") / name


async def test_a_named_pipe_or_a_socket_is_refused_without_being_opened(
    server: LocalSftpServer, client: httpx.AsyncClient, alice: dict[str, str]
) -> None:
    os.mkfifo(home(server, "pipe"))
    os.mknod(home(server, "null"), stat.S_IFCHR | 0o666, os.makedev(1, 3))
    listening = socket.socket(socket.AF_UNIX)
    listening.bind(str(home(server, "sock")))
    kinds = (("pipe", "named pipe"), ("sock", "socket"), ("null", "device"))
    for name, kind in kinds:
        path = {"path": f"{HOME}/{name}"}
        got = await asyncio.wait_for(
            client.get(f"{FILES}/download", params=path, headers=alice), PROMPT
        )
        assert got.status_code == 422, got.text
        assert f"is a {kind}, not a regular file" in got.json()["detail"]
    await sign_in(client, "alice")
    view = await asyncio.wait_for(
        client.get("/files/testcluster/view", params={"path": f"{HOME}/pipe"}), PROMPT
    )
    assert view.status_code == 422 and "is a named pipe, not a regular file" in view.text
    listening.close()


async def test_a_link_planted_as_an_uploads_part_file_is_never_written_through(
    server: LocalSftpServer, client: httpx.AsyncClient, alice: dict[str, str], tmp_path: Path
) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_bytes(b"precious")
    for offset in (0, len(b"precious")):
        upload_id = uuid.uuid4().hex
        home(server, f".portal-upload-{upload_id}.part").symlink_to(outside)
        params = {"folder": HOME, "offset": offset}
        sent = await asyncio.wait_for(
            client.put(
                f"{FILES}/uploads/{upload_id}", params=params, content=b"evil", headers=alice
            ),
            PROMPT,
        )
        assert outside.read_bytes() == b"precious"
        if offset:
            assert sent.status_code == 422, sent.text
            assert "is a symbolic link, not a regular file" in sent.json()["detail"]
        else:
            # Starting over replaces whatever was in the part file's place.
            assert sent.status_code == 200, sent.text
            assert home(server, f".portal-upload-{upload_id}.part").read_bytes() == b"evil"


async def test_a_part_file_swapped_for_a_link_after_its_check_is_not_written_through(
    server: LocalSftpServer, client: httpx.AsyncClient, alice: dict[str, str], tmp_path: Path
) -> None:
    upload_id = uuid.uuid4().hex
    part = home(server, f".portal-upload-{upload_id}.part")
    part.write_bytes(b"12345678")
    outside = tmp_path / "outside.txt"
    outside.write_bytes(b"precious")  # as long as the part: only the size would not tell
    os.utime(outside, (1_000_000_000, 1_000_000_000))
    server.swap_on_open[part.name] = outside
    params = {"folder": HOME, "offset": 8}
    sent = await asyncio.wait_for(
        client.put(f"{FILES}/uploads/{upload_id}", params=params, content=b"!", headers=alice),
        PROMPT,
    )
    assert outside.read_bytes() == b"precious"
    assert sent.status_code == 422, sent.text
    assert "changed while it was being opened" in sent.json()["detail"]


async def test_a_download_the_user_may_not_read_is_refused_before_any_response(
    server: LocalSftpServer, client: httpx.AsyncClient, alice: dict[str, str]
) -> None:
    home(server, "secret.txt").write_bytes(b"not for alice")
    path = {"path": f"{HOME}/secret.txt"}
    api = await client.get(f"{FILES}/download", params=path, headers=alice)
    assert api.status_code == 403, api.text
    assert "Permission denied" in api.json()["detail"]
    await sign_in(client, "alice")
    page = await client.get("/files/testcluster/download", params=path)
    assert page.status_code == 403 and "Permission denied" in page.text


@pytest.mark.parametrize("cluster", [{"sftp_timeout": 1.0}], indirect=True)
async def test_a_stuck_file_operation_answers_in_plain_words_and_the_next_one_works(
    server: LocalSftpServer, client: httpx.AsyncClient, world: World
) -> None:
    home(server, "stuck.txt").write_bytes(b"slow")
    home(server, "plain.txt").write_bytes(b"fast")
    await sign_in(client, "alice")
    stuck = {"path": f"{HOME}/stuck.txt"}
    view = await asyncio.wait_for(client.get("/files/testcluster/view", params=stuck), PROMPT)
    assert view.status_code == 503
    assert "The cluster did not answer within 1 s; try again shortly." in view.text
    french = {"Accept-Language": "fr"}
    again = await asyncio.wait_for(
        client.get("/files/testcluster/view", params=stuck, headers=french), PROMPT
    )
    assert again.status_code == 503 and "pas répondu en 1 s" in again.text
    plain = {"path": f"{HOME}/plain.txt"}
    shown = await asyncio.wait_for(client.get("/files/testcluster/view", params=plain), PROMPT)
    assert shown.status_code == 200 and "fast" in shown.text


async def test_a_stuck_operation_does_not_hold_up_the_same_users_other_requests(
    server: LocalSftpServer, client: httpx.AsyncClient, alice: dict[str, str]
) -> None:
    home(server, "stuck.txt").write_bytes(b"slow")
    stuck = asyncio.create_task(
        client.get(f"{FILES}/download", params={"path": f"{HOME}/stuck.txt"}, headers=alice)
    )
    try:
        assert await asyncio.to_thread(server.stuck.wait, PROMPT)
        listing = await asyncio.wait_for(
            client.get(FILES, params={"path": HOME}, headers=alice), PROMPT
        )
        assert listing.status_code == 200
        assert [entry["name"] for entry in listing.json()["entries"]] == ["stuck.txt"]
    finally:
        server.release()
        await asyncio.wait_for(stuck, PROMPT)
