"""Connections to servers on compute nodes, for clusters whose compute nodes the portal cannot
reach itself (``compute_access = "via_login"`` in the clusters file).

Each connection is handed to the caller as an ordinary connected socket, so HTTP and WebSocket
clients use it as they would a TCP connection (Slurm's: app/scheduler/slurm/tunnel.py).
"""

from __future__ import annotations

import socket
from typing import Protocol, runtime_checkable


@runtime_checkable
class ComputeTunnels(Protocol):
    """Opens connections to compute nodes as a user, through the cluster's login node."""

    async def open(self, host: str, port: int, as_user: str) -> socket.socket:
        """A connected stream socket to ``host:port`` as seen from the login node.

        Raises a SchedulerError when the login node cannot be reached or refuses.
        """
        ...

    async def close(self) -> None:
        """End every connection still open."""
        ...


def tunnels_of(adapter: object) -> ComputeTunnels | None:
    """The adapter's tunnels when its cluster's compute nodes are reached through the login
    node; None when the portal connects to them directly."""
    tunnels = getattr(adapter, "tunnels", None)
    return tunnels if isinstance(tunnels, ComputeTunnels) else None
