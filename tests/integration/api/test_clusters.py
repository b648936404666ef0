from __future__ import annotations

import socket
from pathlib import Path

import httpx
import pytest
from sqlalchemy.ext.asyncio import AsyncSession

from app.config import Settings
from tests.integration.api.conftest import clusters_file, issue_token, serving
from tests.world import World

pytestmark = pytest.mark.slurm


def _closed_port() -> int:
    # Bound and released at once: nothing listens there afterwards.
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


def _unreachable_clusters_file(folder: Path) -> Path:
    text = clusters_file().read_text()
    lines = [
        f"login_port = {_closed_port()}" if line.startswith("login_port") else line
        for line in text.splitlines()
        if not line.startswith(("rest_url", "jwt_key"))
    ]
    path = folder / "clusters.toml"
    path.write_text("\n".join(lines) + "\n")
    return path


async def test_list_names_clusters_with_my_username(
    cluster_client: httpx.AsyncClient, session: AsyncSession, world: World
) -> None:
    headers = await issue_token(session, world.carol, ("read",))
    response = await cluster_client.get("/api/v1/clusters", headers=headers)
    assert response.status_code == 200
    [cluster] = response.json()
    assert (cluster["name"], cluster["username"], cluster["scheduler"]) == (
        "testcluster",
        "carol",
        "slurm",
    )
    said = cluster["capabilities"]
    assert (said["partition_word"], said["expected_start"], said["test_submission"]) == (
        "partition",
        True,
        True,
    )


async def test_cluster_shows_partitions_and_my_associations(
    cluster_client: httpx.AsyncClient, session: AsyncSession, world: World
) -> None:
    headers = await issue_token(session, world.carol, ("read",))
    response = await cluster_client.get("/api/v1/clusters/testcluster", headers=headers)
    assert response.status_code == 200, response.text
    body = response.json()
    partitions = {p["name"]: p for p in body["partitions"]}
    assert {"debug", "long"} <= set(partitions)
    assert partitions["debug"]["is_default"] is True
    assert partitions["debug"]["max_time_minutes"] == 60
    assert partitions["long"]["default_time_minutes"] == 60
    assert {a["account"] for a in body["associations"]} == {"physics"}


async def test_unknown_cluster_is_404(
    cluster_client: httpx.AsyncClient, session: AsyncSession, world: World
) -> None:
    headers = await issue_token(session, world.carol, ("read",))
    response = await cluster_client.get("/api/v1/clusters/elsewhere", headers=headers)
    assert response.status_code == 404


async def test_unreachable_cluster_is_503(
    db_url: str, tmp_path: Path, session: AsyncSession, world: World
) -> None:
    settings = Settings(
        env="dev",
        database_url=db_url,
        clusters_file=_unreachable_clusters_file(tmp_path),
        run_poller_in_web=False,
    )
    headers = await issue_token(session, world.carol, ("read",))
    async with serving(settings) as client:
        response = await client.get("/api/v1/clusters/testcluster", headers=headers)
    assert response.status_code == 503
    assert response.json()["error"] == "ServiceUnavailable"
