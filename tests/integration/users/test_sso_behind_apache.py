"""The trusted-header mode as Open OnDemand sites run it: Debian's Apache with mod_auth_openidc
signs people in at the OpenID provider and passes their login to the portal in a header, which
the portal believes from that proxy's address only (ADR 0004, 0028)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from urllib.parse import urljoin

import httpx
import pytest

from app.web.settings import WebSettings
from tests.apache_oidc import HEADER, PROXY_ADDRESS, ApacheProxy, apache_client
from tests.idp_server import IdentityProvider, signing_key
from tests.portal import free_port
from tests.sso_portal import running_portal


@dataclass
class Site:
    apache: str
    portal: str


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    folder = tmp_path_factory.mktemp("apache-sso")
    portal_port, apache_port = free_port(), free_port()
    idp = IdentityProvider(folder, [apache_client(apache_port)], [signing_key("apache-key")])
    idp.start()
    trusted = WebSettings(trusted_proxy_header=HEADER, trusted_proxies=(f"{PROXY_ADDRESS}/32",))
    apache = ApacheProxy(folder / "apache", idp.issuer, portal_port, apache_port)
    try:
        with running_portal(folder / "portal", portal_port, "", web_settings=trusted) as portal:
            apache.start()
            yield Site(apache=apache.url, portal=portal)
    finally:
        apache.stop()
        idp.stop()


def _sign_in_through_apache(browser: httpx.Client, site: Site, user: str, password: str) -> str:
    """Follow Apache to the provider's login page, sign in, and return the last page's text."""
    answer = browser.get(f"{site.apache}/dashboard")
    for _hop in range(15):
        if answer.status_code == 200 and "/interaction/" in str(answer.url):
            action = answer.text.split('<form method="post" action="')[1].split('"')[0]
            answer = browser.post(
                urljoin(str(answer.url), action), data={"username": user, "password": password}
            )
            continue
        if answer.status_code not in (301, 302, 303, 307):
            return answer.text
        answer = browser.get(urljoin(str(answer.url), answer.headers["location"]))
    raise AssertionError("never came back from the provider")


def test_alice_signs_in_at_the_provider_through_apache(site: Site) -> None:
    with httpx.Client(timeout=20) as browser:
        first = browser.get(f"{site.apache}/dashboard")
        # Apache, not the portal, sends the browser to the provider.
        assert first.status_code == 302
        assert "/auth?" in first.headers["location"]
        page = _sign_in_through_apache(browser, site, "alice", "alice-sso-password")
        assert '<span class="nav-login">alice</span>' in page
        # A header the browser sends itself is removed by Apache before it reaches the portal.
        forged = browser.get(f"{site.apache}/dashboard", headers={HEADER: "bob"})
    assert forged.status_code == 200
    assert '<span class="nav-login">alice</span>' in forged.text


@pytest.mark.parametrize("source", ["127.0.0.1", "127.0.0.3"])
def test_the_header_from_anyone_but_apache_signs_nobody_in(site: Site, source: str) -> None:
    transport = httpx.HTTPTransport(local_address=source)
    with httpx.Client(transport=transport, timeout=10) as client:
        answer = client.get(f"{site.portal}/dashboard", headers={HEADER: "alice"})
    assert answer.status_code == 303
    assert answer.headers["location"].startswith("/signin")


def test_the_same_header_from_apaches_address_is_believed(site: Site) -> None:
    """The refusal above is the address's doing: from the proxy's own, alice is in."""
    transport = httpx.HTTPTransport(local_address=PROXY_ADDRESS)
    with httpx.Client(transport=transport, timeout=10) as client:
        answer = client.get(f"{site.portal}/dashboard", headers={HEADER: "alice"})
    assert answer.status_code == 200
    assert '<span class="nav-login">alice</span>' in answer.text
