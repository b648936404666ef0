"""Per-cluster configuration as written in the clusters TOML file (see docs/contracts.md)."""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from app.scheduler.disk_usage import DiskUsageFormat

Transport = Literal["ssh", "rest"]
# Which batch scheduler runs the cluster: it picks the adapter (app/scheduler/registry.py).
SchedulerName = Literal["slurm", "pbs", "lsf"]
# How the portal reaches a server on a compute node (an interactive app's): "direct" opens a
# connection to the node's address; "via_login" opens an SSH direct-tcpip channel on the
# user's own connection to the login node, so the portal needs no route to compute nodes.
ComputeAccess = Literal["direct", "via_login"]
# Where job logs may be written and read when a cluster's entry names no ``log_roots``.
DEFAULT_LOG_ROOTS: tuple[str, ...] = ("/home", "/scratch")
# Commands one pooled SSH connection runs at once: OpenSSH's default MaxSessions. A server
# refuses the session beyond its limit, so a site that raised MaxSessions raises this too.
DEFAULT_SSH_MAX_SESSIONS = 10
# Seconds one command over SSH, and one SFTP request, may take before the portal gives up on
# it and tells the user: a login node that stops answering, or a file that blocks (a pipe),
# must not keep a request waiting for ever.
DEFAULT_SSH_TIMEOUT = 30.0
DEFAULT_SFTP_TIMEOUT = 30.0


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
    log_roots: tuple[str, ...] = DEFAULT_LOG_ROOTS
    system_users: tuple[str, ...] = ()
    ssh_max_sessions: int = DEFAULT_SSH_MAX_SESSIONS
    ssh_timeout: float = DEFAULT_SSH_TIMEOUT
    sftp_timeout: float = DEFAULT_SFTP_TIMEOUT
    # Run as the user on the login host; empty turns the disk usage panel off for the cluster.
    disk_usage_command: tuple[str, ...] = ()
    disk_usage_format: DiskUsageFormat = "auto"
    # What the Files pages may browse; empty means the log roots. "~" is the user's home.
    file_roots: tuple[str, ...] = ()
    compute_access: ComputeAccess = "direct"
    scheduler: SchedulerName = "slurm"
    # How the poller lists the queue: squeue over SSH, or slurmrestd (transport "rest" only;
    # ADR 0036 measures both).
    queue_reads: Transport = "ssh"

    @property
    def browse_roots(self) -> tuple[str, ...]:
        """The roots the Files pages offer: ``file_roots``, else ``log_roots``."""
        return self.file_roots or self.log_roots

    @property
    def is_host_key_checked(self) -> bool:
        """False only when ``known_hosts`` is empty (development setups)."""
        return bool(self.known_hosts)

    @property
    def forbidden_users(self) -> frozenset[str]:
        """Accounts the portal must never mint credentials for."""
        return frozenset({"root", self.slurm_user})

    @property
    def reserved_users(self) -> frozenset[str]:
        """Accounts no portal user may act as: these, the service account and system ones."""
        extra = {self.service_user, *self.system_users}
        return self.forbidden_users | SYSTEM_ACCOUNTS | extra


# Accounts that exist on every Debian-like login node and must never be a portal user's
# identity; a site adds its own with ``system_users``.
SYSTEM_ACCOUNTS = frozenset(
    {
        "root", "daemon", "bin", "sys", "sync", "games", "man", "lp", "mail", "news", "uucp",
        "proxy", "www-data", "backup", "list", "irc", "gnats", "nobody", "_apt", "sshd",
        "messagebus", "munge", "mysql", "postgres", "slurm", "slurmrestd",
    }
)  # fmt: skip


class _ClusterEntry(BaseModel):
    """One ``[clusters.NAME]`` table; unknown keys are refused by name, so a typo such as
    ``knwon_hosts`` cannot silently turn host-key checking off."""

    model_config = ConfigDict(extra="forbid")

    transport: Transport = "ssh"
    login_host: str = Field(min_length=1)
    login_port: int = Field(default=22, ge=1, le=65535)
    service_user: str = Field(min_length=1)
    service_key: str = Field(min_length=1)
    user_ca_key: str = Field(min_length=1)
    known_hosts: str = ""
    rest_url: str = ""
    jwt_key: str = ""
    slurm_user: str = Field(default="slurm", min_length=1)
    log_roots: tuple[str, ...] = DEFAULT_LOG_ROOTS
    system_users: tuple[str, ...] = ()
    ssh_max_sessions: int = Field(default=DEFAULT_SSH_MAX_SESSIONS, ge=1, le=1024)
    ssh_timeout: float = Field(default=DEFAULT_SSH_TIMEOUT, gt=0, le=3600)
    sftp_timeout: float = Field(default=DEFAULT_SFTP_TIMEOUT, gt=0, le=3600)
    disk_usage_command: tuple[str, ...] = ()
    disk_usage_format: DiskUsageFormat = "auto"
    file_roots: tuple[str, ...] = ()
    compute_access: ComputeAccess = "direct"
    scheduler: SchedulerName = "slurm"
    queue_reads: Transport = "ssh"

    @field_validator("disk_usage_command", mode="before")
    @classmethod
    def _argv_only(cls, value: Any) -> Any:
        # A shell string would need a shell on the login host to split it; an argv needs none.
        if isinstance(value, str):
            raise ValueError('must be a list of arguments, e.g. ["quota", "-w"], not one string')
        return value

    @model_validator(mode="after")
    def _consistent(self) -> _ClusterEntry:
        if self.transport == "rest" and not (self.rest_url and self.jwt_key):
            raise ValueError("rest transport needs rest_url and jwt_key")
        if self.queue_reads == "rest" and self.transport != "rest":
            raise ValueError('queue_reads = "rest" needs transport = "rest"')
        if self.transport == "rest" and self.scheduler != "slurm":
            raise ValueError(f'{self.scheduler} has no REST API the portal uses: transport = "ssh"')
        if not all(root.startswith("/") for root in self.log_roots):
            raise ValueError("log_roots must be absolute paths")
        if not all(root == "~" or root.startswith("/") for root in self.file_roots):
            raise ValueError('file_roots must be absolute paths or "~" (the user\'s home)')
        if not all(argument.strip() for argument in self.disk_usage_command):
            raise ValueError("disk_usage_command must not contain empty arguments")
        return self


def file_problems(error: ValidationError) -> str:
    """An operator file's validation errors in one line, each key named by its path."""
    problems = []
    for item in error.errors():
        where = ".".join(str(part) for part in item["loc"])
        if item["type"] == "extra_forbidden":
            problems.append(f"unknown key {where!r}")
        elif item["type"] == "missing":
            problems.append(f"missing {where}")
        else:
            message = str(item["msg"]).removeprefix("Value error, ")
            problems.append(f"{where}: {message}" if where else message)
    return "; ".join(problems)


def cluster_from_mapping(name: str, raw: Mapping[str, Any]) -> ClusterConfig:
    """Build one ClusterConfig from a TOML table, refusing unknown keys and wrong types."""
    try:
        entry = _ClusterEntry.model_validate(dict(raw))
    except ValidationError as error:
        raise ClusterConfigError(f"cluster {name!r}: {file_problems(error)}") from None
    return ClusterConfig(
        name=name,
        transport=entry.transport,
        login_host=entry.login_host,
        login_port=entry.login_port,
        service_user=entry.service_user,
        service_key=entry.service_key,
        user_ca_key=entry.user_ca_key,
        known_hosts=entry.known_hosts,
        rest_url=entry.rest_url.rstrip("/"),
        jwt_key=entry.jwt_key,
        slurm_user=entry.slurm_user,
        log_roots=entry.log_roots,
        system_users=entry.system_users,
        ssh_max_sessions=entry.ssh_max_sessions,
        ssh_timeout=entry.ssh_timeout,
        sftp_timeout=entry.sftp_timeout,
        disk_usage_command=entry.disk_usage_command,
        disk_usage_format=entry.disk_usage_format,
        file_roots=entry.file_roots,
        compute_access=entry.compute_access,
        scheduler=entry.scheduler,
        queue_reads=entry.queue_reads,
    )


def load_clusters(path: str | Path) -> dict[str, ClusterConfig]:
    """Read a clusters TOML file into ClusterConfig objects keyed by cluster name."""
    with Path(path).open("rb") as handle:
        data = tomllib.load(handle)
    unknown = sorted(set(data) - {"clusters"})
    if unknown:
        raise ClusterConfigError(f"unknown top-level key(s): {', '.join(unknown)}")
    tables = data.get("clusters", {})
    if not isinstance(tables, dict) or not all(isinstance(t, dict) for t in tables.values()):
        raise ClusterConfigError("[clusters] must be a table of tables")
    return {name: cluster_from_mapping(name, raw) for name, raw in tables.items()}
