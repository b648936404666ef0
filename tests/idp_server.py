"""The OpenID provider of the single sign-on tests (``tests/idp/provider.mjs``), as a process.

- ``ensure_installed()``: oidc-provider from ``tests/idp/package-lock.json`` in
  ``/var/lib/hpcportal-dev/idp`` (``npm ci``; what ``scripts/lib/setup.sh`` does on a fresh
  machine, repeated here only when the lock file changed).
- ``signing_key(kid)``: a new RSA private key as a JWK, for the provider or for a forger.
- ``IdentityProvider``: ``node provider.mjs`` on a free loopback port with the given clients
  and keys; ``start()``, ``stop()``, ``issuer``.
"""

from __future__ import annotations

import filecmp
import json
import os
import shutil
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import httpx
from joserfc.jwk import RSAKey

from tests.portal import free_port, wait_for

SOURCE = Path(__file__).resolve().parent / "idp"
INSTALL_DIR = Path(os.environ.get("PORTAL_TEST_IDP_DIR", "/var/lib/hpcportal-dev/idp"))
START_TIMEOUT = 60.0


def ensure_installed() -> Path:
    """The folder whose node_modules holds the locked oidc-provider."""
    INSTALL_DIR.mkdir(parents=True, exist_ok=True)
    lock = INSTALL_DIR / "package-lock.json"
    installed = INSTALL_DIR / "node_modules" / "oidc-provider"
    if not (installed.is_dir() and lock.is_file() and filecmp.cmp(lock, SOURCE / lock.name)):
        for name in ("package.json", "package-lock.json"):
            shutil.copyfile(SOURCE / name, INSTALL_DIR / name)
        subprocess.run(
            ["npm", "ci", "--no-audit", "--no-fund"], cwd=INSTALL_DIR, check=True, timeout=600
        )
    # Beside its node_modules, so Node resolves the import; written whole, then renamed.
    script = INSTALL_DIR / "provider.mjs"
    partial = INSTALL_DIR / f".provider.{os.getpid()}.mjs"
    shutil.copyfile(SOURCE / "provider.mjs", partial)
    partial.replace(script)
    return INSTALL_DIR


def signing_key(kid: str) -> dict[str, Any]:
    key = RSAKey.generate_key(2048, {"kid": kid, "use": "sig", "alg": "RS256"})
    return dict(key.as_dict(private=True))


class IdentityProvider:
    def __init__(
        self,
        workdir: Path,
        clients: Sequence[Mapping[str, Any]],
        keys: Sequence[Mapping[str, Any]],
        port: int | None = None,
    ) -> None:
        self.workdir = workdir
        self.clients = list(clients)
        self.keys = list(keys)
        self.port = port or free_port()
        self.issuer = f"http://127.0.0.1:{self.port}"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> IdentityProvider:
        folder = ensure_installed()
        keys_file = self.workdir / f"idp-keys-{self.port}.json"
        keys_file.write_text(json.dumps({"keys": self.keys}))
        env = {
            **os.environ,
            "IDP_PORT": str(self.port),
            "IDP_ISSUER": self.issuer,
            "IDP_JWKS": str(keys_file),
            "IDP_CLIENTS": json.dumps(self.clients),
        }
        log = (self.workdir / f"idp-{self.port}.log").open("ab")
        self.process = subprocess.Popen(
            ["node", "provider.mjs"], cwd=folder, env=env, stdout=log, stderr=log
        )
        wait_for(self._answers, START_TIMEOUT, "the test identity provider to answer")
        return self

    def _answers(self) -> bool:
        if self.process is not None and self.process.poll() is not None:
            raise RuntimeError(f"the identity provider exited: {self.log()}")
        try:
            url = f"{self.issuer}/.well-known/openid-configuration"
            return httpx.get(url, timeout=2).status_code == 200
        except httpx.HTTPError:
            return False

    def log(self) -> str:
        path = self.workdir / f"idp-{self.port}.log"
        return path.read_text(errors="replace")[-4000:] if path.exists() else ""

    def stop(self) -> None:
        if self.process is None:
            return
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=10)
        self.process = None


def portal_client(redirect_uris: Sequence[str], logout_uris: Sequence[str] = ()) -> dict[str, Any]:
    """The portal's registration at the provider: a confidential client, code flow only."""
    return {
        "client_id": "hpc-portal",
        "client_secret": "portal-client-secret-for-tests-only",
        "redirect_uris": list(redirect_uris),
        "post_logout_redirect_uris": list(logout_uris),
        "grant_types": ["authorization_code"],
        "response_types": ["code"],
        "token_endpoint_auth_method": "client_secret_basic",
    }
