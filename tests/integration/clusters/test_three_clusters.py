"""One portal process serving the three dev clusters (Slurm 22.05, 24.11 and 26.05): a tiny
job submitted to each reaches its end, the job list filters by cluster, and the nodes view of
each cluster is filled by the poller from that cluster's own scontrol; usage is reported per
cluster."""

from __future__ import annotations

import asyncio
import time
import uuid
from pathlib import Path

import httpx
import pytest
from sqlalchemy import select

from app.db import create_engine, create_sessionmaker, migrate_to_head
from app.models.users import User
from app.seed import seed_demo
from app.tokens import service as tokens
from app.users.service import actor_for
from tests.portal import PortalProcess, recreate_postgres_database, wait_for, worker_database_url
from tests.slurm_versions import cluster_config, clusters_file, versions

# Its own lane group: the jobs are one CPU for a second, so it runs beside each version's group.
pytestmark = [pytest.mark.slurm, pytest.mark.all_clusters]
ALL = ("22.05", "24.11", "26.05")
FINAL = {"completed", "failed", "cancelled", "timeout", "out_of_memory", "node_fail"}


@pytest.fixture
def merged_clusters_file(tmp_path: Path) -> Path:
    """The three clusters files in one, as ``scripts/run --all-clusters`` writes it."""
    if not set(ALL) <= set(versions()):
        pytest.skip('needs PORTAL_TEST_SLURM_VERSIONS="22.05 24.11 26.05"')
    merged = tmp_path / "clusters.toml"
    merged.write_text("\n".join(clusters_file(v).read_text() for v in ALL))
    return merged


async def _seed_and_token(url: str, clusters: list[str]) -> str:
    engine = create_engine(url)
    try:
        await seed_demo(create_sessionmaker(engine), clusters)
        async with create_sessionmaker(engine)() as session:
            alice = (await session.scalars(select(User).where(User.login == "alice"))).one()
            created = await tokens.create_token(
                session,
                await actor_for(session, alice),
                name="three",
                scopes=["submit"],
                lifetime_days=1,
            )
            await session.commit()
            return created.secret
    finally:
        await engine.dispose()


def test_one_portal_lists_filters_and_reads_the_nodes_of_three_clusters(
    merged_clusters_file: Path, tmp_path: Path
) -> None:
    names = [cluster_config(v).name for v in ALL]
    url = worker_database_url("clusters")
    recreate_postgres_database(url)
    migrate_to_head(url)
    token = asyncio.run(_seed_and_token(url, names))
    env = {
        "PORTAL_CLUSTERS_FILE": str(merged_clusters_file),
        "PORTAL_NODES_EVERY": "1",
        "PORTAL_USAGE_INGEST_INTERVAL": "2",
    }
    portal = PortalProcess(url, tmp_path / "portal.log", env=env)
    portal.start()
    try:
        with httpx.Client(
            base_url=f"{portal.base_url}/api/v1",
            timeout=30,
            headers={"Authorization": f"Bearer {token}"},
        ) as api:
            assert [c["name"] for c in api.get("/clusters").json()] == sorted(names)
            projects = {
                p["cluster"]: p["id"]
                for p in api.get("/projects").json()
                if p["slurm_account"] == "physics"
            }
            tag = uuid.uuid4().hex[:8]
            submitted = {}
            for name in names:
                body = {
                    "script": "#!/bin/bash\nhostname\n",
                    "name": f"three-{tag}",
                    "project_id": projects[name],
                    "time_limit_minutes": 2,
                }
                response = api.post(
                    "/jobs", json=body, headers={"Idempotency-Key": uuid.uuid4().hex}
                )
                assert response.status_code in (200, 201), response.text
                submitted[name] = response.json()["id"]

            def ended() -> bool:
                jobs = api.get("/jobs", params={"q": f"three-{tag}", "limit": 10}).json()["items"]
                return len(jobs) == 3 and all(j["state"] in FINAL for j in jobs)

            started = time.monotonic()
            wait_for(ended, 120, "a job on each of the three clusters to end")
            print(f"three jobs ended in {time.monotonic() - started:.1f} s")
            for name in names:
                listed = api.get("/jobs", params={"cluster": name, "q": f"three-{tag}"}).json()
                assert [(j["id"], j["cluster"], j["state"]) for j in listed["items"]] == [
                    (submitted[name], name, "completed")
                ]

            def usage_by_cluster() -> dict[str, int]:
                body = api.get("/usage", params={"group_by": "cluster"}).json()
                return {t["group"]: t["jobs_total"] for t in body["totals"]}

            wait_for(
                lambda: set(usage_by_cluster()) == set(names),
                60,
                "usage of every cluster to be ingested",
            )
            one = api.get("/usage", params={"cluster": names[1], "group_by": "project"}).json()
            assert [t["group"] for t in one["totals"]] == [f"physics ({names[1]})"]
            wait_for(
                lambda: all(api.get(f"/clusters/{n}/nodes").json()["read_at"] for n in names),
                30,
                "the nodes of every cluster to be read",
            )
            for name in names:
                nodes = api.get(f"/clusters/{name}/nodes").json()
                assert "debug" in nodes["partitions"]
                assert nodes["nodes"] and all("debug" in n["partitions"] for n in nodes["nodes"])
                assert all(n["cpus"]["total"] >= 1 for n in nodes["nodes"])
    finally:
        portal.stop()
    assert not portal.errors()
