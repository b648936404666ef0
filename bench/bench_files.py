"""Upload and download throughput of one file through the portal's API against plain `sftp`.

    .venv/bin/python bench/bench_files.py [--megabytes 200] [--rounds 2]

Needs the local cluster (``scripts/dev-cluster up``). Serves the portal with uvicorn in its
own process (SQLite in a temporary directory) and, as ``alice`` with an API token, uploads a
random file in 8 MiB pieces (``PUT /api/v1/files/…/uploads/{id}``) and downloads it
(``GET …/download``); then OpenSSH's ``sftp`` does the same as ``alice`` with a certificate
minted the portal's way, to the same host in the same run. Best of ``--rounds`` each; prints
MB/s and the portal's share of plain sftp's speed.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import logging
import os
import subprocess
import tempfile
import time
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
from portal_process import CLUSTER, CLUSTERS_FILE, alice_with_token, served

from app.db import migrate_to_head
from app.scheduler.config import ClusterConfig, load_clusters
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


async def _portal_download(client: httpx.AsyncClient, folder: str, checksum: str) -> float:
    digest, started = hashlib.sha256(), time.perf_counter()
    params = {"path": f"{folder}/bench.bin"}
    async with client.stream("GET", f"/api/v1/files/{CLUSTER}/download", params=params) as got:
        got.raise_for_status()
        async for piece in got.aiter_bytes(1 << 20):
            digest.update(piece)
    elapsed = time.perf_counter() - started
    assert digest.hexdigest() == checksum, "the portal's download differs"
    return elapsed


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
        down = min([await _portal_download(client, folder, checksum) for _ in range(rounds)])
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
    assert hashlib.sha256(copy.read_bytes()).hexdigest() == checksum, "sftp's copy differs"
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
        plain = _sftp_rounds(config, work, source, checksum, rounds)
    _report(size, portal, plain)


def _report(size: int, portal: tuple[float, float], plain: tuple[float, float]) -> None:
    megabytes = size / 1e6
    for label, index in (("upload", 0), ("download", 1)):
        through, direct = megabytes / portal[index], megabytes / plain[index]
        print(
            f"{label:8} {megabytes:.0f} MB: portal API {through:6.1f} MB/s  "
            f"sftp {direct:6.1f} MB/s  portal/sftp {through / direct:.2f}"
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
