"""``hpcportal nodes CLUSTER``: what is idle on each node of the user's partitions."""

from __future__ import annotations

import httpx
import pytest

from app.cli.client import PortalClient
from app.cli.config import ClientConfig
from app.cli.exit_codes import ExitCode
from app.cli.main import build_parser

BODY = {
    "cluster": "testcluster2411",
    "read_at": "2026-11-27T17:00:00Z",
    "partitions": ["debug", "gpu"],
    "nodes": [
        {
            "name": "gpu01",
            "state": "mixed",
            "native_state": "MIXED",
            "takes_jobs": True,
            "partitions": ["gpu"],
            "cpus": {"total": 64, "allocated": 16, "idle": 48},
            "memory_mb": {"total": 524288, "allocated": 131072, "idle": 393216},
            "gpus": {"total": 4, "allocated": 1, "idle": 3},
            "features": ["a100"],
            "reason": None,
        }
    ],
}


def test_nodes_prints_idle_of_total_and_passes_the_filters(
    capsys: pytest.CaptureFixture[str],
) -> None:
    asked: list[httpx.URL] = []

    def answer(request: httpx.Request) -> httpx.Response:
        asked.append(request.url)
        return httpx.Response(200, json=BODY)

    client = PortalClient(
        ClientConfig("http://portal.test", "hpc_x"), transport=httpx.MockTransport(answer)
    )
    args = build_parser().parse_args(
        ["nodes", "testcluster2411", "--partition", "gpu", "--available"]
    )
    assert args.run(client, args) == ExitCode.OK
    assert asked[0].path == "/api/v1/clusters/testcluster2411/nodes"
    assert dict(asked[0].params) == {"partition": "gpu", "available": "true"}
    out = capsys.readouterr().out.splitlines()
    assert out[0].split() == [
        "NAME",
        "STATE",
        "CPUS",
        "MEMORY_GB",
        "GPUS",
        "PARTITIONS",
        "FEATURES",
        "REASON",
    ]
    assert out[1].split() == ["gpu01", "mixed", "48/64", "384.0/512.0", "3/4", "gpu", "a100", "-"]
    assert out[-1].startswith("your partitions: debug, gpu; read 2026-11-27T17:00:00Z")


def test_jobs_list_filters_by_cluster() -> None:
    asked: list[httpx.URL] = []

    def answer(request: httpx.Request) -> httpx.Response:
        asked.append(request.url)
        return httpx.Response(200, json={"items": [], "next_cursor": None})

    client = PortalClient(
        ClientConfig("http://portal.test", "hpc_x"), transport=httpx.MockTransport(answer)
    )
    args = build_parser().parse_args(["jobs", "list", "--cluster", "testcluster2605"])
    assert args.run(client, args) == ExitCode.OK
    assert asked[0].path == "/api/v1/jobs" and asked[0].params["cluster"] == "testcluster2605"


def test_clusters_names_each_with_my_username_and_nodes_not_read_yet_says_so(
    capsys: pytest.CaptureFixture[str],
) -> None:
    answers = {
        "/api/v1/clusters": [{"name": "testcluster", "username": "alice", "scheduler": "slurm"}],
        "/api/v1/clusters/testcluster/nodes": {
            "cluster": "testcluster",
            "read_at": None,
            "partitions": [],
            "nodes": [],
        },
    }
    client = PortalClient(
        ClientConfig("http://portal.test", "hpc_x"),
        transport=httpx.MockTransport(lambda r: httpx.Response(200, json=answers[r.url.path])),
    )
    for argv in (["clusters"], ["nodes", "testcluster"]):
        args = build_parser().parse_args(argv)
        assert args.run(client, args) == ExitCode.OK
    out = capsys.readouterr().out.splitlines()
    assert out[:2] == ["NAME         SCHEDULER  USERNAME", "testcluster  slurm      alice"]
    assert out[2] == "the nodes of testcluster have not been read yet"
