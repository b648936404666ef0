"""Which transport lists the queue of a cluster whose jobs go through slurmrestd."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from app.scheduler.config import ClusterConfig
from app.scheduler.slurm.adapter import SlurmAdapter
from app.scheduler.slurm.ssh import CommandResult

REST_CLUSTER = ClusterConfig(
    name="testcluster",
    transport="rest",
    login_host="127.0.0.1",
    login_port=2222,
    service_user="hpcsvc",
    service_key="/dev/null",
    user_ca_key="/dev/null",
    rest_url="http://127.0.0.1:6820",
    jwt_key="/dev/null",
)


class Ssh:
    def __init__(self) -> None:
        self.commands: list[Sequence[str]] = []

    async def run(self, argv: Sequence[str], **options: Any) -> CommandResult:
        self.commands.append(argv)
        return CommandResult(0, b"", "")

    async def stream(
        self, argv: Sequence[str], consume: Callable[[bytes], None], **options: Any
    ) -> CommandResult:
        return await self.run(argv, **options)


class Rest:
    def __init__(self, payload: Mapping[str, Any]) -> None:
        self.payload = payload
        self.calls: list[str] = []

    async def version(self) -> str:
        return "v0.0.42"

    async def call(self, method: str, endpoint: str, **options: Any) -> Mapping[str, Any]:
        self.calls.append(f"{method} {endpoint}")
        return self.payload


async def test_the_queue_is_listed_with_squeue_unless_the_cluster_asks_for_slurmrestd(
    recorded,
) -> None:
    for api, payload in recorded.rest("rest-jobs-active").items():
        ssh, rest = Ssh(), Rest(payload)
        adapter = SlurmAdapter(REST_CLUSTER, ssh, rest)  # type: ignore[arg-type]
        assert await adapter.queue() == []
        assert rest.calls == [] and "squeue" in ssh.commands[0], api

        ssh, rest = Ssh(), Rest(payload)
        over_rest = dataclasses.replace(REST_CLUSTER, queue_reads="rest")
        adapter = SlurmAdapter(over_rest, ssh, rest)  # type: ignore[arg-type]
        assert len(await adapter.queue()) == len(payload["jobs"]) > 0
        assert rest.calls == ["GET jobs"] and ssh.commands == [], api
