"""Per-cluster configuration as written in the clusters TOML file (see docs/contracts.md)."""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

Transport = Literal["ssh", "rest"]


class ClusterConfigError(ValueError):
    """The clusters file is missing a required key or holds a wrong value."""


@dataclass(frozen=True, slots=True)
class ClusterConfig:
    """How the portal reaches one cluster and which identities it may use there."""

    name: str
    transport: Transport
    login_host: str
    login_port: int
    service_user: str
    service_key: str
    user_ca_key: str
    known_hosts: str = ""
    rest_url: str = ""
    jwt_key: str = ""
    slurm_user: str = "slurm"
    log_roots: tuple[str, ...] = ("/home", "/scratch")

    @property
    def is_host_key_checked(self) -> bool:
        """False only when ``known_hosts`` is empty (development setups)."""
        return bool(self.known_hosts)

    @property
    def forbidden_users(self) -> frozenset[str]:
        """Accounts the portal must never mint credentials for."""
        return frozenset({"root", self.slurm_user})


_REQUIRED = ("login_host", "service_user", "service_key", "user_ca_key")


def cluster_from_mapping(name: str, raw: Mapping[str, Any]) -> ClusterConfig:
    """Build one ClusterConfig from a TOML table, checking required keys and types."""
    missing = [key for key in _REQUIRED if not raw.get(key)]
    if missing:
        raise ClusterConfigError(f"cluster {name!r}: missing {', '.join(missing)}")
    transport = raw.get("transport", "ssh")
    if transport not in ("ssh", "rest"):
        raise ClusterConfigError(f"cluster {name!r}: transport must be 'ssh' or 'rest'")
    if transport == "rest" and not (raw.get("rest_url") and raw.get("jwt_key")):
        raise ClusterConfigError(f"cluster {name!r}: rest transport needs rest_url and jwt_key")
    roots = tuple(str(root) for root in raw.get("log_roots", ("/home", "/scratch")))
    if not all(root.startswith("/") for root in roots):
        raise ClusterConfigError(f"cluster {name!r}: log_roots must be absolute paths")
    return ClusterConfig(
        name=name,
        transport=transport,
        login_host=str(raw["login_host"]),
        login_port=int(raw.get("login_port", 22)),
        service_user=str(raw["service_user"]),
        service_key=str(raw["service_key"]),
        user_ca_key=str(raw["user_ca_key"]),
        known_hosts=str(raw.get("known_hosts", "")),
        rest_url=str(raw.get("rest_url", "")).rstrip("/"),
        jwt_key=str(raw.get("jwt_key", "")),
        slurm_user=str(raw.get("slurm_user", "slurm")),
        log_roots=roots,
    )


def load_clusters(path: str | Path) -> dict[str, ClusterConfig]:
    """Read a clusters TOML file into ClusterConfig objects keyed by cluster name."""
    with Path(path).open("rb") as handle:
        data = tomllib.load(handle)
    tables = data.get("clusters", {})
    if not isinstance(tables, dict):
        raise ClusterConfigError("[clusters] must be a table of tables")
    return {name: cluster_from_mapping(name, raw) for name, raw in tables.items()}
