"""Which adapters reach compute nodes through the login node: those whose cluster says
``compute_access = "via_login"``, seen through the metrics wrapper too."""

from __future__ import annotations

import asyncio
import dataclasses

from app.observability.scheduler import InstrumentedAdapter
from app.scheduler.config import ClusterConfig
from app.scheduler.fake import FakeScheduler
from app.scheduler.registry import build_adapter
from app.scheduler.slurm.ssh import Channel
from app.scheduler.slurm.tunnel import SshTunnels
from app.scheduler.tunnels import tunnels_of

CONFIG = ClusterConfig(
    name="site", transport="ssh", login_host="login", login_port=22, service_user="hpcsvc",
    service_key="/k/svc", user_ca_key="/k/ca",
)  # fmt: skip


async def test_only_a_via_login_cluster_has_tunnels_and_the_wrapper_shows_them() -> None:
    direct = build_adapter(CONFIG)
    via_login = build_adapter(dataclasses.replace(CONFIG, compute_access="via_login"))
    try:
        tunnels = tunnels_of(via_login)
        assert isinstance(tunnels, SshTunnels)
        assert tunnels_of(InstrumentedAdapter("site", via_login)) is tunnels
        assert tunnels_of(direct) is None
        assert tunnels_of(InstrumentedAdapter("site", direct)) is None
        assert tunnels_of(FakeScheduler()) is None
    finally:
        await direct.close()
        await via_login.close()


class LoopbackSsh:
    """Stands in for SshTransport.open_channel: a TCP connection on loopback as the channel."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.released = 0

    async def open_channel(self, host: str, port: int, as_user: str) -> Channel:
        reader, writer = await asyncio.open_connection("127.0.0.1", self.port)

        def release() -> None:
            self.released += 1

        return Channel(reader, writer, release)


async def test_a_tunnel_relays_both_ways_and_gives_its_channel_back() -> None:
    async def shout(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write((await reader.read()).upper())  # until the portal's end of data
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(shout, "127.0.0.1", 0)
    ssh = LoopbackSsh(server.sockets[0].getsockname()[1])
    tunnels = SshTunnels(ssh)  # type: ignore[arg-type]
    async with server:
        sock = await tunnels.open("node017", 8888, "alice")
        reader, writer = await asyncio.open_connection(sock=sock)
        writer.write(b"hello node")
        writer.write_eof()
        assert await reader.read() == b"HELLO NODE"
        writer.close()
        async with asyncio.timeout(5):
            while ssh.released == 0:
                await asyncio.sleep(0.01)
        await tunnels.close()
    assert ssh.released == 1
