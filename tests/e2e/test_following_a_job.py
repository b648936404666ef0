"""A short job followed in Chromium: its page catches up with it by itself and offers
nothing that no longer applies; alerts a researcher can get, in French on a phone."""

from __future__ import annotations

import re
import uuid
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import LiveServer
from tests.e2e.test_jobs_flow import STATUS_BADGE, shot, sign_in

pytestmark = [pytest.mark.browser, pytest.mark.slurm]

QUICK = """#!/bin/bash
#SBATCH --job-name=quick-{tag}
#SBATCH --time=00:02:00
#SBATCH --output=/home/alice/portal-web-{tag}/%x-%j.out
echo "hello from quick-{tag}"
"""


def test_a_one_second_jobs_page_catches_up_and_offers_nothing_that_no_longer_applies(
    page: Any, screenshots: Path
) -> None:
    tag = uuid.uuid4().hex[:8]
    sign_in(page)
    page.goto("/submit/script")
    page.fill("#script", QUICK.format(tag=tag))
    page.get_by_role("button", name="Submit job").click()
    page.wait_for_url(re.compile(r".*/jobs/\d+$"), timeout=60_000)

    expect(page.locator("#log-stdout")).to_contain_text(f"hello from quick-{tag}", timeout=60_000)
    # No reload: the status follows the job and the actions for a live job go.
    expect(page.locator(STATUS_BADGE)).to_have_text("Completed", timeout=15_000)
    status = page.locator("#job-status")
    expect(status.get_by_role("link", name="Cancel job")).to_have_count(0)
    expect(status.get_by_role("link", name="Notify me…")).to_have_count(0)
    expect(status).to_contain_text("debug (the cluster's default)")
    expect(page.locator("footer").get_by_role("link", name="API reference")).to_have_attribute(
        "href", "/api/docs"
    )
    shot(page, screenshots, "quick-job-completed")
    page.set_viewport_size({"width": 390, "height": 844})
    assert page.evaluate("document.scrollingElement.scrollWidth") <= 390
    shot(page, screenshots, "quick-job-completed-phone")


def test_alerts_a_researcher_can_get_in_french_on_a_phone(
    browser: Any, live_server: LiveServer, screenshots: Path
) -> None:
    context = browser.new_context(
        base_url=live_server.base_url,
        locale="fr-FR",
        extra_http_headers={"Accept-Language": "fr-FR,fr;q=0.9"},
        viewport={"width": 390, "height": 844},
    )
    page = context.new_page()
    sign_in(page, "carol")
    page.goto("/settings/notifications")
    offered = page.locator(".channels-offered")
    expect(offered).to_contain_text("Courriel : non proposé : ce site n'a pas de serveur")
    expect(
        page.get_by_label("Dans ce navigateur, tant qu'un onglet du portail est ouvert")
    ).to_be_checked()
    expect(page.locator("#channel-webhook")).not_to_be_checked()
    assert page.evaluate("document.scrollingElement.scrollWidth") <= 390
    shot(page, screenshots, "notifications-fr-phone")
    page.locator("#event").select_option("failed")
    page.get_by_role("button", name="Ajouter la règle").click()
    expect(page.locator("#created-rule")).to_contain_text(
        "Ce navigateur vous avertira quand l'un de vos travaux échoue"
    )
    expect(page.locator("#rules-table")).to_contain_text("dans ce navigateur")
    page.goto("/settings/tokens")
    expect(
        page.locator("main").get_by_role("link", name="référence de l'API", exact=True)
    ).to_have_attribute("href", "/api/docs")
    shot(page, screenshots, "tokens-fr-phone")
    context.close()
