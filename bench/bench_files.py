"""Upload and download throughput of one file through the portal's API against plain `sftp`.

    .venv/bin/python bench/bench_files.py [--megabytes 200] [--rounds 2]

Needs the local cluster (``scripts/dev-cluster up``). Serves the portal with uvicorn in its
own process (SQLite in a temporary directory) and, as ``alice`` with an API token, uploads a
random file in 8 MiB pieces (``PUT /api/v1/files/…/uploads/{id}``) and downloads it
(``GET …/download``); then the scheduler library's own SFTP layer does the same from this
process (the floor: no HTTP, API or database), and OpenSSH's ``sftp`` as ``alice`` with a
certificate minted the portal's way, to the same host in the same run. Best of ``--rounds``
each; prints MB/s, and the portal's and the floor's share of plain sftp's speed.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import hashlib
import logging
import os
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import httpx
from portal_process import CLUSTER, CLUSTERS_FILE, alice_with_token, free_port, served

from app.db import migrate_to_head
from app.scheduler.config import ClusterConfig, load_clusters
from app.scheduler.registry import build_adapter
from app.scheduler.slurm.adapter import SlurmAdapter
from app.scheduler.slurm.certificates import UserCertificates

PART = 8 << 20


def _random_file(path: Path, size: int) -> str:
    digest = hashlib.sha256()
    with path.open("wb") as handle:
        for start in range(0, size, PART):
            piece = os.urandom(min(PART, size - start))
            digest.update(piece)
            handle.write(piece)
    return digest.hexdigest()


async def _parts(path: Path) -> AsyncIterator[bytes]:
    with path.open("rb") as handle:
        while piece := handle.read(PART):
            yield piece


async def _portal_upload(client: httpx.AsyncClient, source: Path, folder: str) -> float:
    upload = f"/api/v1/files/{CLUSTER}/uploads/{uuid.uuid4().hex}"
    started, offset = time.perf_counter(), 0
    async for piece in _parts(source):
        sent = await client.put(upload, params={"folder": folder, "offset": offset}, content=piece)
        sent.raise_for_status()
        offset = sent.json()["size"]
    body = {"folder": folder, "name": "bench.bin", "size": offset, "replace": True}
    (await client.post(f"{upload}/complete", json=body)).raise_for_status()
    return time.perf_counter() - started


@contextlib.contextmanager
def _bare_app() -> Iterator[str]:
    """``bare_app.py`` in uvicorn on a free local port: its base URL, until the block ends."""
    port = free_port()
    argv = [sys.executable, "-m", "uvicorn", "--factory", "bare_app:create"]
    argv += ["--port", str(port), "--no-access-log", "--log-level", "warning"]
    bare = subprocess.Popen(argv, cwd=Path(__file__).parent)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        bare.terminate()
        bare.wait()


async def _http_floor(
    base: str, source: Path, size: int, copy: Path, rounds: int
) -> tuple[float, float]:
    """The same pieces to and from a bare app in the same framework that keeps nothing: what
    HTTP alone costs on this machine, with the same client."""
    async with httpx.AsyncClient(base_url=base, timeout=120) as client:
        await _answering(client)
        ups, downs = [], []
        for _ in range(rounds):
            started = time.perf_counter()
            async for piece in _parts(source):
                (await client.put("/bytes", content=piece)).raise_for_status()
            ups.append(time.perf_counter() - started)
        for _ in range(rounds):
            started = time.perf_counter()
            with copy.open("wb") as written:
                async with client.stream("GET", "/bytes", params={"size": size}) as got:
                    async for piece in got.aiter_bytes(1 << 20):
                        written.write(piece)
            downs.append(time.perf_counter() - started)
    return min(ups), min(downs)


async def _answering(client: httpx.AsyncClient) -> None:
    for _ in range(100):
        try:
            (await client.get("/bytes", params={"size": 1})).raise_for_status()
            return
        except httpx.TransportError:
            await asyncio.sleep(0.1)
    raise SystemExit("the bare app did not answer")


def _checked(copy: Path, checksum: str, who: str) -> None:
    """The copy's checksum, read after the clock stopped, as for sftp's."""
    assert hashlib.sha256(copy.read_bytes()).hexdigest() == checksum, f"{who}'s copy differs"


async def _portal_download(
    client: httpx.AsyncClient, folder: str, copy: Path, checksum: str
) -> float:
    started = time.perf_counter()
    params = {"path": f"{folder}/bench.bin"}
    with copy.open("wb") as written:
        url = f"/api/v1/files/{CLUSTER}/download"
        async with client.stream("GET", url, params=params) as got:
            got.raise_for_status()
            async for piece in got.aiter_bytes(1 << 20):
                written.write(piece)
    elapsed = time.perf_counter() - started
    _checked(copy, checksum, "the portal")
    return elapsed


async def _floor_rounds(
    config: ClusterConfig, source: Path, copy: Path, checksum: str, rounds: int
) -> tuple[float, float]:
    """The same pieces through the scheduler library's own SFTP layer, from this process: what
    the portal's file routes call, without HTTP, the API or the database (the floor)."""
    adapter = build_adapter(config, "ssh")
    assert isinstance(adapter, SlurmAdapter)
    folder = f"/home/alice/floor-bench-{uuid.uuid4().hex[:8]}"
    await adapter.files.make_folder(folder, "alice")
    ups, downs = [], []
    try:
        for _ in range(rounds):
            upload, started, offset = uuid.uuid4().hex, time.perf_counter(), 0
            async for piece in _parts(source):
                offset = await adapter.files.write_part(
                    folder, upload, offset, _one(piece), "alice"
                )
            await adapter.files.finish_upload(
                folder, upload, "bench.bin", offset, "alice", replace=True
            )
            ups.append(time.perf_counter() - started)
        for _ in range(rounds):
            started = time.perf_counter()
            opened = await adapter.files.open_file(f"{folder}/bench.bin", "alice")
            with copy.open("wb") as written:
                async for piece in opened.chunks:
                    written.write(piece)
            downs.append(time.perf_counter() - started)
            _checked(copy, checksum, "the library")
        await adapter.files.remove(f"{folder}/bench.bin", "alice")
        await adapter.files.remove(folder, "alice")
    finally:
        await adapter.close()
    return min(ups), min(downs)


async def _one(piece: bytes) -> AsyncIterator[bytes]:
    yield piece


def _sftp_identity(config: ClusterConfig, folder: Path) -> list[str]:
    key, cert = UserCertificates(config).credentials_for("alice")
    (folder / "id").write_bytes(key.export_private_key())
    (folder / "id").chmod(0o600)
    (folder / "id-cert.pub").write_bytes(cert.export_certificate())
    return [
        "sftp", "-q", "-P", str(config.login_port), "-i", str(folder / "id"),
        "-o", f"CertificateFile={folder / 'id-cert.pub'}",
        "-o", f"UserKnownHostsFile={config.known_hosts}", "-o", "BatchMode=yes",
    ]  # fmt: skip


def _sftp(argv: list[str], host: str, commands: str) -> float:
    started = time.perf_counter()
    subprocess.run(
        [*argv, "-b", "-", f"alice@{host}"],
        input=commands.encode(),
        check=True,
        stdout=subprocess.DEVNULL,
    )
    return time.perf_counter() - started


async def _portal_rounds(
    port: int, token: str, source: Path, checksum: str, rounds: int
) -> tuple[float, float]:
    headers = {"Authorization": f"Bearer {token}"}
    folder = f"/home/alice/portal-bench-{uuid.uuid4().hex[:8]}"
    base = f"http://127.0.0.1:{port}"
    async with httpx.AsyncClient(base_url=base, headers=headers, timeout=120) as client:
        (
            await client.post(f"/api/v1/files/{CLUSTER}/folders", json={"path": folder})
        ).raise_for_status()
        up = min([await _portal_upload(client, source, folder) for _ in range(rounds)])
        copy = source.with_name("portal.bin")
        down = min([await _portal_download(client, folder, copy, checksum) for _ in range(rounds)])
        await client.delete(f"/api/v1/files/{CLUSTER}", params={"path": f"{folder}/bench.bin"})
        await client.delete(f"/api/v1/files/{CLUSTER}", params={"path": folder})
    return up, down


def _sftp_rounds(
    config: ClusterConfig, work: Path, source: Path, checksum: str, rounds: int
) -> tuple[float, float]:
    argv = _sftp_identity(config, work)
    target = f"/home/alice/sftp-bench-{uuid.uuid4().hex[:8]}.bin"
    copy = work / "back.bin"
    up = min(_sftp(argv, config.login_host, f"put {source} {target}\n") for _ in range(rounds))
    down = min(_sftp(argv, config.login_host, f"get {target} {copy}\n") for _ in range(rounds))
    _sftp(argv, config.login_host, f"rm {target}\n")
    _checked(copy, checksum, "sftp")
    return up, down


async def run(megabytes: int, rounds: int) -> None:
    config = load_clusters(CLUSTERS_FILE)[CLUSTER]
    size = megabytes * 1000 * 1000
    with tempfile.TemporaryDirectory() as temporary:
        work = Path(temporary)
        database_url = f"sqlite+aiosqlite:///{work / 'bench.db'}"
        migrate_to_head(database_url)
        token, _no_project = await alice_with_token(database_url)
        source = work / "bench.bin"
        checksum = _random_file(source, size)
        with served(database_url) as port:
            portal = await _portal_rounds(port, token, source, checksum, rounds)
        floor = await _floor_rounds(config, source, work / "floor.bin", checksum, rounds)
        with _bare_app() as base:
            http = await _http_floor(base, source, size, work / "http.bin", rounds)
        plain = _sftp_rounds(config, work, source, checksum, rounds)
    _report(size, {"portal API": portal, "library": floor, "bare HTTP": http, "sftp": plain})


def _report(size: int, seconds: dict[str, tuple[float, float]]) -> None:
    megabytes = size / 1e6
    for label, index in (("upload", 0), ("download", 1)):
        speeds = {name: megabytes / taken[index] for name, taken in seconds.items()}
        plain = speeds["sftp"]
        # When the SFTP stage and the HTTP stage share the same cores, each megabyte costs
        # the time of both: the most the portal can do is 1 / (1/library + 1/HTTP).
        both = 1 / (1 / speeds["library"] + 1 / speeds["bare HTTP"])
        print(
            f"{label:8} {megabytes:.0f} MB: "
            + "  ".join(f"{name} {speed:6.1f} MB/s" for name, speed in speeds.items())
            + f"  portal/sftp {speeds['portal API'] / plain:.2f}"
            + f"  library/sftp {speeds['library'] / plain:.2f}"
            + f"  both stages in series {both:6.1f} MB/s ({both / plain:.2f} of sftp)"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--megabytes", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    asyncio.run(run(args.megabytes, args.rounds))


if __name__ == "__main__":
    logging.basicConfig(level=logging.WARNING)
    main()
