"""Which hosts are a session's own, and the one-time tickets and cookies that open them."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from app.config import Settings
from app.main import _check_apps_domain
from app.web import app_credentials as credentials
from app.web.app_origins import session_hex_of, split_host
from app.web.settings import WebSettings

HEX = "0123456789abcdef0123456789abcdef"
OTHER = "f" * 32
KEY = "k" * 40


@pytest.mark.parametrize(
    ("host", "expected"),
    [
        ("portal.example.org:443", ("portal.example.org", ":443")),
        ("S-ABC.Apps.Example.org.", ("s-abc.apps.example.org", "")),
        ("[::1]:8000", ("[::1]", ":8000")),
        ("portal:80@evil.example", ("portal", "")),
        ("", ("", "")),
    ],
)
def test_a_host_header_is_split_into_name_and_numeric_port(
    host: str, expected: tuple[str, str]
) -> None:
    assert split_host(host) == expected


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        (f"s-{HEX}.apps.localhost", HEX),
        ("apps.localhost", ""),
        ("www.apps.localhost", ""),
        (f"x.s-{HEX}.apps.localhost", ""),
        (f"s-{HEX}0.apps.localhost", ""),
        ("localhost", None),
        (f"s-{HEX}.apps.localhost.evil.example", None),
        (f"s-{HEX}.xapps.localhost", None),
        ("127.0.0.1", None),
    ],
)
def test_only_hosts_under_the_apps_domain_are_app_hosts(name: str, expected: str | None) -> None:
    assert session_hex_of(name, "apps.localhost") == expected


def spender() -> credentials.Spend:
    """A one-process stand-in for ``app.interactive.tickets.spend``."""
    spent: set[str] = set()

    async def spend(nonce: str) -> bool:
        is_new = nonce not in spent
        spent.add(nonce)
        return is_new

    return spend


async def test_a_ticket_opens_its_own_session_once() -> None:
    used = spender()
    ticket = credentials.mint_ticket(KEY, credentials.Grant(HEX, 7))

    assert await credentials.redeem_ticket(KEY, ticket, OTHER, used) is None
    assert await credentials.redeem_ticket(KEY, ticket, HEX, used) == credentials.Grant(HEX, 7)
    assert await credentials.redeem_ticket(KEY, ticket, HEX, used) is None
    assert await credentials.redeem_ticket("another-key" * 4, ticket, HEX, used) is None


async def test_a_ticket_expires_after_a_minute(monkeypatch: pytest.MonkeyPatch) -> None:
    ticket = credentials.mint_ticket(KEY, credentials.Grant(HEX, 7))
    real = credentials.TimestampSigner.get_timestamp
    monkeypatch.setattr(credentials.TimestampSigner, "get_timestamp", lambda self: real(self) + 61)

    assert await credentials.redeem_ticket(KEY, ticket, HEX, spender()) is None


async def test_a_hosts_cookie_names_one_session_and_is_not_a_ticket() -> None:
    grant = credentials.Grant(HEX, 7)
    cookie = credentials.cookie_value(KEY, grant)
    ticket = credentials.mint_ticket(KEY, grant)

    assert credentials.grant_of_cookie(KEY, cookie, HEX) == grant
    assert credentials.grant_of_cookie(KEY, cookie, OTHER) is None
    assert credentials.grant_of_cookie(KEY, ticket, HEX) is None
    assert await credentials.redeem_ticket(KEY, cookie, HEX, spender()) is None
    assert credentials.grant_of_cookie(KEY, None, HEX) is None


@pytest.mark.parametrize("domain", ["localhost", "apps.example.org:8443", "https://apps.x.org", ""])
def test_the_apps_domain_is_a_dns_name_of_two_labels_or_more(domain: str) -> None:
    with pytest.raises(ValidationError):
        WebSettings(apps_domain=domain)


def test_the_apps_domain_is_kept_in_lower_case() -> None:
    assert WebSettings(apps_domain="Apps.Portal.Example.org.").apps_domain == (
        "apps.portal.example.org"
    )


def test_a_production_portal_warns_while_apps_open_only_on_its_own_machine(
    caplog: pytest.LogCaptureFixture,
) -> None:
    production = Settings.model_construct(env="prod")
    _check_apps_domain(production, WebSettings())
    warned = caplog.text
    caplog.clear()
    _check_apps_domain(production, WebSettings(apps_domain="apps.portal.example.org"))
    _check_apps_domain(Settings.model_construct(env="dev"), WebSettings())

    assert "PORTAL_APPS_DOMAIN is apps.localhost" in warned
    assert caplog.text == ""
