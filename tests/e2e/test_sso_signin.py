"""Single sign-on in Chromium: the portal's button, the provider's own login page, back to the
portal signed in as alice, and out again at both (ADR 0028)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.shots import shot
from tests.idp_server import IdentityProvider, portal_client, signing_key
from tests.portal import free_port
from tests.sso_portal import running_portal

pytestmark = pytest.mark.browser


@dataclass
class SsoSite:
    portal: str
    issuer: str


@pytest.fixture
def site(tmp_path: Path) -> Iterator[SsoSite]:
    port = free_port()
    client = portal_client(
        [f"http://127.0.0.1:{port}/signin/sso/callback"], [f"http://127.0.0.1:{port}/signin"]
    )
    idp = IdentityProvider(tmp_path, [client], [signing_key("browser-test-key")]).start()
    try:
        with running_portal(tmp_path / "portal", port, idp.issuer) as portal:
            yield SsoSite(portal=portal, issuer=idp.issuer)
    finally:
        idp.stop()


def test_alice_signs_in_at_the_provider_and_out_again(
    site: SsoSite, browser: Any, screenshots: Path
) -> None:
    from playwright.sync_api import expect

    context = browser.new_context(viewport={"width": 1280, "height": 800})
    page = context.new_page()
    page.goto(f"{site.portal}/dashboard")
    expect(page).to_have_url(f"{site.portal}/signin?next=%2Fdashboard")
    shot(page, screenshots, "sso-portal-signin")

    page.get_by_role("link", name="Sign in with Test IdP").click()
    expect(page.get_by_role("heading", name="Test Identity Provider")).to_be_visible()
    assert page.url.startswith(f"{site.issuer}/interaction/")
    shot(page, screenshots, "sso-provider-login")

    page.get_by_label("Username").fill("alice")
    page.get_by_label("Password").fill("wrong")
    page.get_by_role("button", name="Sign in at the provider").click()
    expect(page.locator("#idp-error")).to_have_text("Wrong username or password.")
    page.get_by_label("Username").fill("alice")
    page.get_by_label("Password").fill("alice-sso-password")
    page.get_by_role("button", name="Sign in at the provider").click()

    expect(page).to_have_url(f"{site.portal}/dashboard")
    expect(page.locator(".nav-login")).to_have_text("alice")
    shot(page, screenshots, "sso-portal-signed-in")

    # Signing out of the portal signs out at the provider too, which comes back to /signin.
    page.get_by_role("button", name="Sign out").click()
    page.get_by_role("button", name="Yes, sign me out").click()
    expect(page).to_have_url(f"{site.portal}/signin")
    page.goto(f"{site.portal}/dashboard")
    expect(page).to_have_url(f"{site.portal}/signin?next=%2Fdashboard")
    # The provider forgot alice too: its login page asks again.
    page.get_by_role("link", name="Sign in with Test IdP").click()
    expect(page.get_by_label("Password")).to_be_visible()
    context.close()


def test_an_answer_from_nowhere_is_a_plain_page_in_french(
    site: SsoSite, browser: Any, screenshots: Path
) -> None:
    from playwright.sync_api import expect

    context = browser.new_context(locale="fr-FR", viewport={"width": 1280, "height": 700})
    page = context.new_page()
    answer = page.goto(f"{site.portal}/signin/sso/callback?state=forged&code=forged")
    assert answer is not None and answer.status == 401
    expect(page.get_by_role("alert")).to_contain_text(
        "Cette connexion n'a pas été commencée dans ce navigateur"
    )
    shot(page, screenshots, "sso-refused-fr")
    context.close()
