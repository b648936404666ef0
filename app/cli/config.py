"""Where the CLI finds the portal and its token: environment first, then the config file."""

from __future__ import annotations

import json
import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

URL_ENV = "HPCPORTAL_URL"
TOKEN_ENV = "HPCPORTAL_TOKEN"  # noqa: S105
CONFIG_ENV = "HPCPORTAL_CONFIG"


class ConfigMissing(Exception):
    """No portal URL or token is configured."""


@dataclass(frozen=True, slots=True)
class ClientConfig:
    url: str
    token: str


def config_path(environ: Mapping[str, str] | None = None) -> Path:
    environ = os.environ if environ is None else environ
    if environ.get(CONFIG_ENV):
        return Path(environ[CONFIG_ENV])
    base = environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "hpcportal" / "config.toml"


def _read_file(path: Path) -> dict[str, str]:
    if not path.is_file():
        return {}
    with path.open("rb") as handle:
        data = tomllib.load(handle)
    return {key: str(value) for key, value in data.items() if key in ("url", "token")}


def load_config(environ: Mapping[str, str] | None = None) -> ClientConfig:
    """The URL and token to use; ConfigMissing says how to set them."""
    environ = os.environ if environ is None else environ
    stored = _read_file(config_path(environ))
    url = environ.get(URL_ENV) or stored.get("url", "")
    token = environ.get(TOKEN_ENV) or stored.get("token", "")
    if not url or not token:
        raise ConfigMissing(
            f"no portal configured: run 'hpcportal configure --url URL --token TOKEN' "
            f"or set {URL_ENV} and {TOKEN_ENV}"
        )
    return ClientConfig(url=url.rstrip("/"), token=token)


def save_config(config: ClientConfig, environ: Mapping[str, str] | None = None) -> Path:
    """Write the config file readable by its owner only; the token is a password."""
    path = config_path(environ)
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    # JSON string escapes are valid TOML basic-string escapes.
    text = f"url = {json.dumps(config.url)}\ntoken = {json.dumps(config.token)}\n"
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
        handle.write(text)
    # The file may have existed with looser permissions before.
    path.chmod(0o600)
    return path
