"""The SSH and REST transports against the development cluster's sshd and slurmrestd."""

from __future__ import annotations

import asyncio
import dataclasses
from pathlib import Path

import asyncssh
import pytest

from app.scheduler.config import ClusterConfig
from app.scheduler.errors import PermissionDenied, SchedulerTimeout, SchedulerUnavailable
from app.scheduler.slurm.rest import RestTransport
from app.scheduler.slurm.ssh import OutputTooLarge, SshTransport

pytestmark = pytest.mark.slurm


async def test_commands_run_as_the_user_over_one_pooled_connection(cluster: ClusterConfig) -> None:
    transport = SshTransport(cluster)
    try:
        results = await asyncio.gather(
            *(transport.run(["id", "-un"], as_user="alice") for _ in range(5))
        )
        assert {r.text for r in results} == {"alice\n"}
        service = await transport.run(["id", "-un"])
        assert service.text.strip() == transport.config.service_user
        assert transport.open_connections == 2
    finally:
        await transport.close()


async def test_stdin_reaches_the_command_unchanged(cluster: ClusterConfig) -> None:
    transport = SshTransport(cluster)
    payload = "line one\n$(id) `id` 'quoted' \"double\"\n"
    try:
        result = await transport.run(["cat"], as_user="bob", stdin=payload)
        assert result.text == payload
    finally:
        await transport.close()


async def test_argv_is_quoted_for_the_remote_shell(cluster: ClusterConfig) -> None:
    transport = SshTransport(cluster)
    hostile = "x; touch /tmp/pwned-by-argv $(id) `id`"
    try:
        result = await transport.run(["printf", "%s", hostile], as_user="alice")
        assert result.text == hostile
    finally:
        await transport.close()


async def test_slow_command_times_out(cluster: ClusterConfig) -> None:
    transport = SshTransport(cluster, command_timeout=0.5)
    try:
        with pytest.raises(SchedulerTimeout):
            await transport.run(["sleep", "5"], as_user="alice")
    finally:
        await transport.close()


async def test_output_above_the_cap_is_refused(cluster: ClusterConfig) -> None:
    transport = SshTransport(cluster, output_cap=1_000_000)
    try:
        with pytest.raises(OutputTooLarge):
            await transport.run(["head", "-c", "3000000", "/dev/zero"], as_user="alice")
    finally:
        await transport.close()


async def test_no_login_for_root(cluster: ClusterConfig) -> None:
    transport = SshTransport(cluster)
    try:
        with pytest.raises(PermissionDenied):
            await transport.run(["true"], as_user="root")
    finally:
        await transport.close()


async def test_unknown_host_key_is_refused(cluster: ClusterConfig, tmp_path: Path) -> None:
    stranger = asyncssh.generate_private_key("ssh-ed25519").export_public_key().decode()
    config = cluster
    known = tmp_path / "known_hosts"
    known.write_text(f"[{config.login_host}]:{config.login_port} {stranger}")
    transport = SshTransport(dataclasses.replace(config, known_hosts=str(known)))
    try:
        with pytest.raises(SchedulerUnavailable):
            await transport.run(["true"], as_user="alice")
    finally:
        await transport.close()


async def test_rest_discovers_v0038_and_acts_as_the_user(cluster: ClusterConfig) -> None:
    config = cluster
    transport = RestTransport(config)
    try:
        assert await transport.version() == "v0.0.38"
        pings = await transport.call("GET", "ping", as_user="alice")
        assert pings["pings"][0]["ping"] == "UP"
    finally:
        await transport.close()


async def test_rest_refuses_to_act_as_the_slurm_user(cluster: ClusterConfig) -> None:
    transport = RestTransport(cluster)
    try:
        with pytest.raises(PermissionDenied):
            await transport.call("GET", "ping", as_user="slurm")
    finally:
        await transport.close()
