"""Single sign-on's settings are checked at start-up, and the provider's origin is the only
one a form may lead to besides the portal's (ADR 0028)."""

from __future__ import annotations

import pytest

from app.config import ConfigError, Settings, load_settings
from app.main import _form_targets
from app.security import CONTENT_SECURITY_POLICY, security_headers


def _problems(monkeypatch: pytest.MonkeyPatch, **variables: str) -> str:
    for name, value in variables.items():
        monkeypatch.setenv(f"PORTAL_{name.upper()}", value)
    with pytest.raises(ConfigError) as refused:
        load_settings()
    return str(refused.value)


def test_an_issuer_without_a_client_id_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    assert "PORTAL_OIDC_CLIENT_ID is required" in _problems(
        monkeypatch, oidc_issuer="https://idp.example.org"
    )


def test_passwords_off_without_a_provider_would_lock_everyone_out(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert "nobody could sign in" in _problems(monkeypatch, password_signin="false")


def test_production_needs_an_https_issuer(monkeypatch: pytest.MonkeyPatch) -> None:
    message = _problems(
        monkeypatch,
        env="prod",
        secret_key="x" * 40,
        oidc_issuer="http://idp.example.org",
        oidc_client_id="portal",
    )
    assert "must use https in production" in message


def test_scopes_without_openid_are_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    message = _problems(
        monkeypatch, oidc_issuer="https://idp.example.org", oidc_client_id="p", oidc_scopes="email"
    )
    assert "must include openid" in message


def test_forms_may_lead_to_the_providers_origin_only_when_it_is_configured() -> None:
    assert _form_targets(Settings()) == ()
    assert security_headers(())["Content-Security-Policy"] == CONTENT_SECURITY_POLICY
    settings = Settings(oidc_issuer="https://idp.example.org/realms/hpc", oidc_client_id="p")
    targets = _form_targets(settings)
    assert targets == ("https://idp.example.org",)
    policy = security_headers(targets)["Content-Security-Policy"]
    assert policy.endswith("form-action 'self' https://idp.example.org")
