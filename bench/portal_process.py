"""The portal served by uvicorn in a process of its own, for benchmarks that compare it with
the cluster's own tools: a database of its own, the local cluster's clusters file, no poller.

Imported by the benchmarks beside it (they run as scripts, so this folder is on their path);
the process itself is the test suite's (``tests/portal.py``), so a benchmark starts the portal
the way every test tier does.
"""

from __future__ import annotations

import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from app.db import create_engine, create_sessionmaker, unit_of_work
from app.models.projects import Membership, Project
from app.models.users import User, UserClusterAccount
from app.tokens import service as tokens
from app.users.actor import Actor

ROOT = Path(__file__).resolve().parents[1]
# The repository's root, for tests.portal: a script's path starts with its own folder.
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tests.portal import CLUSTERS_FILE, PortalProcess, free_port  # noqa: E402

__all__ = ["CLUSTERS_FILE", "ROOT", "alice_with_token", "free_port", "served"]
CLUSTER = "testcluster"


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
def served(database_url: str, workers: int | None = None) -> Iterator[int]:
    """The portal listening on a free local port (yielded) until the block ends; no poller.

    With ``workers`` it is started as in production, ``python -m app.serve`` with that many
    uvicorn workers; without, one uvicorn process as before."""
    with tempfile.TemporaryDirectory() as logs:
        log = Path(logs) / "portal.log"
        portal = PortalProcess(
            database_url, log, poller=False, workers=workers or 1, serve=workers is not None
        )
        portal.start()
        try:
            yield portal.port
        finally:
            portal.stop()
