"""Settings of the browser-facing surface (environment, prefix ``PORTAL_``)."""

from __future__ import annotations

import ipaddress
from typing import Annotated

from fastapi import Request
from pydantic import field_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict


class WebSettings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="PORTAL_", extra="ignore")

    # e.g. REMOTE_USER; empty turns header sign-in off.
    trusted_proxy_header: str = ""
    # Addresses whose header is believed; a comma-separated list in the environment.
    trusted_proxies: Annotated[tuple[str, ...], NoDecode] = ()
    # Force the Secure flag on cookies even when the app sees plain HTTP behind a proxy.
    secure_cookies: bool = False

    @field_validator("trusted_proxies", mode="before")
    @classmethod
    def _split(cls, value: object) -> object:
        if isinstance(value, str):
            value = [part.strip() for part in value.split(",") if part.strip()]
        for address in value if isinstance(value, list | tuple) else ():
            ipaddress.ip_network(str(address), strict=False)
        return value

    def is_trusted_proxy(self, address: str | None) -> bool:
        if not address or not self.trusted_proxy_header:
            return False
        try:
            client = ipaddress.ip_address(address)
        except ValueError:
            return False
        return any(client in ipaddress.ip_network(p, strict=False) for p in self.trusted_proxies)


def get_web_settings(request: Request) -> WebSettings:
    """The app's WebSettings, read from the environment the first time they are needed."""
    state = request.app.state
    if not hasattr(state, "web_settings"):
        state.web_settings = WebSettings()
    settings: WebSettings = state.web_settings
    return settings
