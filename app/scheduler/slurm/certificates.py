"""Short-lived SSH user certificates, signed by the cluster's user CA for one user at a time.

Users log in with them, so a job runs under its user's own Unix identity and nothing
per-user is stored; root, the Slurm user and the service identity are never given one.
"""

from __future__ import annotations

import secrets
import time
from typing import Any

import asyncssh

from app.scheduler.config import ClusterConfig
from app.scheduler.errors import PermissionDenied
from app.scheduler.slurm.commands import check_user


class UserCertificates:
    """Mints and caches short-lived SSH user certificates signed by the cluster's CA."""

    def __init__(self, config: ClusterConfig, *, lifetime: int = 300) -> None:
        self._config = config
        self._lifetime = lifetime
        self._ca: Any = None
        self._cache: dict[str, tuple[float, Any, Any]] = {}

    def credentials_for(self, user: str) -> tuple[Any, Any]:
        """Return (private key, certificate) for ``user``; refuses root and the Slurm user."""
        check_user(user)
        if user in self._config.forbidden_users or user == self._config.service_user:
            raise PermissionDenied(f"refusing to mint a login certificate for {user!r}")
        now = time.time()
        cached = self._cache.get(user)
        if cached is not None and cached[0] - 60 > now:
            return cached[1], cached[2]
        if self._ca is None:
            self._ca = asyncssh.read_private_key(self._config.user_ca_key)
        key = asyncssh.generate_private_key("ssh-ed25519")
        # Backdating covers small clock skew between the portal and the login node.
        cert = self._ca.generate_user_certificate(
            key,
            f"hpc-portal:{user}:{secrets.token_hex(4)}",
            principals=[user],
            valid_after=int(now) - 60,
            valid_before=int(now) + self._lifetime,
        )
        self._cache[user] = (now + self._lifetime, key, cert)
        return key, cert
