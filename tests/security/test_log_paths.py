"""Log reads that try to leave the allowed roots: ``..``, absolute paths and alice's symlinks.

A finished job of alice's gets a hostile ``stdout_path`` in the database (as a tampered or
badly rendered row would have). Reading it through the API, the log page, the download and
the stream must never return the target's content and never fail with a 500. alice's
symlinks point at /etc/shadow (unreadable for her), /etc/passwd (readable for her, so only
the portal's root check stops it), a directory outside the roots, and a file bob keeps to
himself.
"""

from __future__ import annotations

import asyncio
import subprocess
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from app.db import create_engine, create_sessionmaker
from app.models.jobs import Job
from tests.factories import seeded_user_and_project
from tests.portal import PortalProcess
from tests.security.conftest import api_token, signed_in

pytestmark = [pytest.mark.slurm]
PASSWD_LINE = "root:x:0:0"


@dataclass
class Trap:
    tag: str
    bob_secret: str
    bob_file: Path
    links: dict[str, str]  # link inside alice's home -> target


def _as(user: str, *command: str) -> None:
    subprocess.run(["runuser", "-u", user, "--", *command], check=True, capture_output=True)


@pytest.fixture
def trap() -> Iterator[Trap]:
    tag = uuid.uuid4().hex[:12]
    secret = f"bob-private-{uuid.uuid4().hex}"
    bob_file = Path(f"/home/bob/secret-{tag}.txt")
    _as("bob", "sh", "-c", f"umask 077 && printf %s {secret} > {bob_file}")
    folder = f"/home/alice/portal-jobs/evil-{tag}"
    targets = {
        f"{folder}/shadow.out": "/etc/shadow",
        f"{folder}/passwd.out": "/etc/passwd",
        f"{folder}/bob.out": str(bob_file),
        f"{folder}/etc": "/etc",
    }
    _as("alice", "mkdir", "-p", folder)
    for link, target in targets.items():
        _as("alice", "ln", "-s", target, link)
    try:
        yield Trap(tag, secret, bob_file, targets)
    finally:
        _as("alice", "rm", "-rf", folder)
        bob_file.unlink(missing_ok=True)


def hostile_paths(trap: Trap) -> list[str]:
    folder = f"/home/alice/portal-jobs/evil-{trap.tag}"
    return [
        "/home/alice/../../etc/passwd",
        "/home/alice/portal-jobs/../../../etc/shadow",
        "/scratch/alice/../../etc/passwd",
        "../../../../etc/passwd",
        "/etc/passwd",
        "/etc/shadow",
        "/var/lib/hpcportal-dev/user_ca",
        f"/home/bob/secret-{trap.tag}.txt",
        f"{folder}/shadow.out",
        f"{folder}/passwd.out",
        f"{folder}/bob.out",
        f"{folder}/etc/passwd",
        f"{folder}/./etc/../etc/passwd",
    ]


async def _make_jobs(url: str, paths: list[str]) -> dict[str, int]:
    engine = create_engine(url)
    try:
        async with create_sessionmaker(engine)() as session:
            alice, project = await seeded_user_and_project(session)
            jobs = {
                path: Job(
                    uuid=str(uuid.uuid4()),
                    owner_user_id=alice.id,
                    project_id=project.id,
                    cluster="testcluster",
                    script="#!/bin/bash\ntrue\n",
                    name="log-path",
                    state="completed",
                    slurm_job_id=str(9_000_000 + index),
                    stdout_path=path,
                )
                for index, path in enumerate(paths)
            }
            session.add_all(jobs.values())
            await session.commit()
            return {path: job.id for path, job in jobs.items()}
    finally:
        await engine.dispose()


def _assert_refused(response: httpx.Response, trap: Trap, where: str) -> None:
    assert response.status_code < 500, (where, response.status_code)
    body = response.text
    assert PASSWD_LINE not in body, f"{where} returned /etc/passwd"
    assert "root:$" not in body and "root:*" not in body, f"{where} returned /etc/shadow"
    assert trap.bob_secret not in body, f"{where} returned bob's file"
    assert "OPENSSH PRIVATE KEY" not in body, f"{where} returned the user CA key"


def test_log_reads_stay_inside_the_roots(live_portal: PortalProcess, trap: Trap) -> None:
    ids = asyncio.run(_make_jobs(live_portal.database_url, hostile_paths(trap)))
    headers = {"Authorization": f"Bearer {api_token(live_portal, 'alice', ['read'])}"}
    statuses: dict[int, int] = {}
    with (
        httpx.Client(base_url=live_portal.base_url, headers=headers, timeout=60) as api,
        signed_in(live_portal, "alice") as web,
    ):
        for path, job_id in ids.items():
            answer = api.get(f"/api/v1/jobs/{job_id}/logs/stdout")
            _assert_refused(answer, trap, f"API {path}")
            if answer.status_code == 200:
                assert answer.json()["data"] == "" and answer.json()["is_missing"], path
            statuses[answer.status_code] = statuses.get(answer.status_code, 0) + 1
            for suffix in ("", "/download"):
                page = web.client.get(f"/jobs/{job_id}/logs/stdout{suffix}")
                _assert_refused(page, trap, f"page{suffix} {path}")
    print(f"\nhostile log paths: {len(ids)} refused, API statuses {statuses}")


def test_the_traps_are_real(trap: Trap) -> None:
    """alice really can read /etc/passwd through her link: only the portal stands in the way."""
    link = next(link for link, target in trap.links.items() if target == "/etc/passwd")
    out = subprocess.run(
        ["runuser", "-u", "alice", "--", "cat", link], capture_output=True, text=True, check=True
    ).stdout
    assert PASSWD_LINE in out
