"""Settings of the browser-facing surface (environment, prefix ``PORTAL_``)."""

from __future__ import annotations

import ipaddress
import re
from typing import Annotated, Any

from pydantic import Field, ValidationError, field_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict
from starlette.requests import HTTPConnection

from app.config import ConfigError, describe_validation_error

# Lower-case DNS labels, at least two of them, no port: the parent of every session's host.
APPS_DOMAIN = re.compile(r"^(?!-)[a-z0-9-]{1,63}(?<!-)(\.(?!-)[a-z0-9-]{1,63}(?<!-))+$")


class WebSettings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="PORTAL_", extra="ignore")

    # e.g. REMOTE_USER; empty turns header sign-in off.
    trusted_proxy_header: str = ""
    # Addresses whose header is believed; a comma-separated list in the environment.
    trusted_proxies: Annotated[tuple[str, ...], NoDecode] = ()
    # Force the Secure flag on cookies even when the app sees plain HTTP behind a proxy.
    secure_cookies: bool = False
    # Failed sign-ins per five minutes over the whole site before everyone must wait.
    signin_site_limit: int = Field(default=100, ge=1)
    # Who may read /metrics and the detailed /healthz on the web port (monitoring hosts).
    operations_networks: Annotated[tuple[str, ...], NoDecode] = ("127.0.0.1/32", "::1/128")
    # Largest request body accepted, in bytes; a 1 MiB script as JSON fits.
    max_body_bytes: int = Field(default=4 * 1024 * 1024, ge=1024)
    # Interactive apps are served from s-<id>.<apps_domain>, never from the portal's own host
    # (ADR 0019). It needs a wildcard DNS record and certificate; *.localhost reaches this
    # machine in browsers, so the default serves a browser on the portal's own machine only.
    apps_domain: str = "apps.localhost"

    @field_validator("trusted_proxies", "operations_networks", mode="before")
    @classmethod
    def _split(cls, value: object) -> object:
        if isinstance(value, str):
            value = [part.strip() for part in value.split(",") if part.strip()]
        for address in value if isinstance(value, list | tuple) else ():
            ipaddress.ip_network(str(address), strict=False)
        return value

    @field_validator("apps_domain")
    @classmethod
    def _domain(cls, value: str) -> str:
        value = value.strip().lower().rstrip(".")
        if not APPS_DOMAIN.match(value):
            raise ValueError("must be a DNS name such as apps.portal.example.org, without a port")
        return value

    def is_trusted_proxy(self, address: str | None) -> bool:
        if not self.trusted_proxy_header:
            return False
        return self.is_proxy(address)

    def is_operations_address(self, address: str | None) -> bool:
        return _in_networks(address, self.operations_networks)

    def is_proxy(self, address: str | None) -> bool:
        """Whether ``address`` is one of the reverse proxies named in PORTAL_TRUSTED_PROXIES."""
        return _in_networks(address, self.trusted_proxies)


def _in_networks(address: str | None, networks: tuple[str, ...]) -> bool:
    if not address:
        return False
    try:
        client = ipaddress.ip_address(address)
    except ValueError:
        return False
    return any(client in ipaddress.ip_network(n, strict=False) for n in networks)


def get_web_settings(request: HTTPConnection) -> WebSettings:
    """The app's WebSettings, read from the environment the first time they are needed."""
    return web_settings_of(request.app)


def load_web_settings() -> WebSettings:
    """The browser surface's settings from the environment, or a ConfigError naming each."""
    try:
        return WebSettings()
    except ValidationError as error:
        raise ConfigError(describe_validation_error(error)) from None


def web_settings_of(app: Any) -> WebSettings:
    """The WebSettings ``create_app`` gave ``app``."""
    settings: WebSettings = app.state.web_settings
    return settings
