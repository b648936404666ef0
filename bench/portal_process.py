"""The portal served by uvicorn in a process of its own, for benchmarks that compare it with
the cluster's own tools: a database of its own, the local cluster's clusters file, no poller.

Imported by the benchmarks beside it (they run as scripts, so this folder is on their path).
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

from app.db import create_engine, create_sessionmaker, unit_of_work
from app.models import Membership, Project, User, UserClusterAccount
from app.tokens import service as tokens
from app.users.actor import Actor

CLUSTERS_FILE = os.environ.get("PORTAL_CLUSTERS_FILE", "/var/lib/hpcportal-dev/clusters.toml")
CLUSTER = "testcluster"
ROOT = Path(__file__).resolve().parents[1]


async def alice_with_token(database_url: str, account: str | None = None) -> tuple[str, int]:
    """alice, mapped to ``alice`` on the cluster, with a submit token: (token, project id).

    With ``account`` she is a member of a project charging that Slurm account; else the
    project id is 0.
    """
    engine = create_engine(database_url)
    async with unit_of_work(create_sessionmaker(engine)) as session:
        user = User(login="alice", display_name="Alice")
        user.cluster_accounts.append(UserClusterAccount(cluster=CLUSTER, username="alice"))
        session.add(user)
        project_id = 0
        if account is not None:
            project = Project(name=account.title(), slurm_account=account, cluster=CLUSTER)
            session.add(project)
            await session.flush()
            session.add(Membership(user_id=user.id, project_id=project.id, role="member"))
            project_id = project.id
        await session.flush()
        actor = Actor(user_id=user.id, login="alice")
        created = await tokens.create_token(
            session, actor, name="bench", scopes=("submit",), lifetime_days=1
        )
    await engine.dispose()
    return created.secret, project_id


@contextmanager
def served(database_url: str) -> Iterator[int]:
    """The portal listening on a free local port (yielded) until the block ends."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = {
        **os.environ,
        "PORTAL_ENV": "dev",
        "PORTAL_DATABASE_URL": database_url,
        "PORTAL_CLUSTERS_FILE": CLUSTERS_FILE,
        "PORTAL_RUN_POLLER_IN_WEB": "false",
    }
    argv = [sys.executable, "-m", "uvicorn", "--factory", "app.main:create_app"]
    argv += ["--port", str(port), "--log-level", "warning"]
    # Its own session, so its helper processes end with it.
    quiet = subprocess.DEVNULL
    server = subprocess.Popen(
        argv, env=env, cwd=ROOT, stdout=quiet, stderr=quiet, start_new_session=True
    )
    try:
        _wait_until_up(port)
        yield port
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait()


def _wait_until_up(port: int) -> None:
    for _ in range(200):
        try:
            if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1).status_code == 200:
                return
        except httpx.HTTPError:
            time.sleep(0.1)
    raise RuntimeError("the portal did not start")
