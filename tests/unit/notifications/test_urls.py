"""Webhook addresses: http(s) only, public hosts only unless the operator allows private."""

from __future__ import annotations

import ipaddress

import pytest

from app.notifications import urls
from app.notifications.urls import UnsafeUrl, check_syntax, check_target, is_public


@pytest.mark.parametrize(
    "url",
    [
        "ftp://example.org/x",
        "file:///etc/passwd",
        "gopher://example.org/",
        "javascript:alert(1)",
        "http:///no-host",
        "https://user:pw@example.org/",
        "http://example.org:99999/",
        "example.org/hook",
    ],
)
def test_other_schemes_and_malformed_addresses_are_refused(url: str) -> None:
    with pytest.raises(UnsafeUrl):
        check_syntax(url)


@pytest.mark.parametrize(
    "address",
    [
        "127.0.0.1",
        "10.1.2.3",
        "172.16.0.1",
        "192.168.1.1",
        "169.254.169.254",
        "100.64.0.1",
        "0.0.0.0",
        "224.0.0.1",
        "::1",
        "fe80::1",
        "fc00::1",
        "::ffff:127.0.0.1",
        "::ffff:169.254.169.254",
    ],
)
def test_private_loopback_and_link_local_addresses_are_not_public(address: str) -> None:
    assert not is_public(ipaddress.ip_address(address))


@pytest.mark.parametrize("address", ["93.184.216.34", "2606:2800:220:1:248:1893:25c8:1946"])
def test_public_addresses_are_public(address: str) -> None:
    assert is_public(ipaddress.ip_address(address))


def _resolving_to(monkeypatch: pytest.MonkeyPatch, *addresses: str) -> None:
    async def fake(host: str, port: int) -> list[urls.IPAddress]:
        return [ipaddress.ip_address(a) for a in addresses]

    monkeypatch.setattr(urls, "resolve", fake)


async def test_a_name_resolving_to_a_private_address_is_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _resolving_to(monkeypatch, "93.184.216.34", "10.0.0.5")
    with pytest.raises(UnsafeUrl, match="private, loopback or link-local"):
        await check_target("https://hooks.example.org/x", allow_private=False)


async def test_the_checked_address_is_the_one_connected_to(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _resolving_to(monkeypatch, "93.184.216.34")
    target = await check_target("https://hooks.example.org:8443/in?x=1", allow_private=False)
    assert target.pinned_url == "https://93.184.216.34:8443/in?x=1"
    assert target.host_header == "hooks.example.org:8443"
    assert target.hostname == "hooks.example.org"


async def test_ipv6_targets_are_bracketed() -> None:
    target = await check_target("http://[::1]:8080/hook", allow_private=True)
    assert target.pinned_url == "http://[::1]:8080/hook"


async def test_loopback_is_refused_unless_the_operator_allows_it() -> None:
    with pytest.raises(UnsafeUrl):
        await check_target("http://127.0.0.1:9/hook", allow_private=False)
    target = await check_target("http://127.0.0.1:9/hook", allow_private=True)
    assert str(target.address) == "127.0.0.1"


async def test_a_name_that_does_not_resolve_is_refused() -> None:
    with pytest.raises(UnsafeUrl, match="cannot be resolved"):
        await check_target("https://no-such-host.invalid/hook", allow_private=False)


@pytest.mark.parametrize(
    "address",
    [
        "::127.0.0.1",
        "::10.0.0.1",
        "::169.254.169.254",
        "::ffff:0:127.0.0.1",
        "64:ff9b::127.0.0.1",
        "64:ff9b::10.1.2.3",
        "64:ff9b::169.254.169.254",
        "64:ff9b:1::127.0.0.1",
        "64:ff9b:1:7f00:1::",
        "2002:7f00:1::1",
        "2002:a9fe:a9fe::1",
        "2001:0:4136:e378:8000:63bf:80ff:fffe",
    ],
)
def test_an_ipv4_address_carried_in_ipv6_is_judged_by_that_ipv4_address(address: str) -> None:
    assert not is_public(ipaddress.ip_address(address))


@pytest.mark.parametrize("address", ["64:ff9b::8.8.8.8", "2002:808:808::1", "::ffff:8.8.8.8"])
def test_a_public_ipv4_address_carried_in_ipv6_is_public(address: str) -> None:
    assert is_public(ipaddress.ip_address(address))


@pytest.mark.parametrize(
    ("typed", "stored"),
    [
        ("https://Bücher.Example/hook?x=ü", "https://xn--bcher-kva.example/hook?x=ü"),
        (
            "http://\uff2c\uff2f\uff23\uff21\uff2c\uff28\uff2f\uff33\uff34:8080/in",
            "http://localhost:8080/in",
        ),
        ("https://HOOKS.example.org/in", "https://hooks.example.org/in"),
        ("https://[::1]:8443/in", "https://[::1]:8443/in"),
    ],
)
def test_a_host_name_is_stored_in_its_ascii_form(typed: str, stored: str) -> None:
    assert urls.normalised(typed) == stored


@pytest.mark.parametrize(
    "url",
    [
        "http://exa mple.org/",
        "http://a..example.org/",
        "http://-a.example.org/",
        "http://xn--zz.org/",
    ],
)
def test_a_host_name_with_no_ascii_form_is_refused(url: str) -> None:
    with pytest.raises(UnsafeUrl, match="not a valid host name"):
        check_syntax(url)


async def test_the_request_carries_the_host_name_in_ascii(monkeypatch: pytest.MonkeyPatch) -> None:
    _resolving_to(monkeypatch, "93.184.216.34")
    target = await check_target("https://Bücher.example:8443/in", allow_private=False)
    assert target.host_header == "xn--bcher-kva.example:8443"
    assert target.hostname == "xn--bcher-kva.example"
