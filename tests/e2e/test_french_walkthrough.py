"""A researcher whose browser asks for French (fr-CA) signs in, submits a script on the real
cluster, reads its output and opens the usage page: no step shows English of the interface."""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import LiveServer
from tests.e2e.test_jobs_flow import STATUS_BADGE, shot, sign_in
from tests.i18n_check import english_left

pytestmark = [pytest.mark.browser, pytest.mark.slurm, pytest.mark.slow]

SCRIPT = """#!/bin/bash
#SBATCH --job-name=bonjour-{tag}
#SBATCH --time=00:05:00
#SBATCH --mem=200M
#SBATCH --output=/home/alice/portal-web-{tag}/logs/%x-%j.out

echo "bonjour, premier argument : $1"
"""


@pytest.fixture
def french_page(browser: Any, live_server: LiveServer) -> Iterator[Any]:
    """A page whose browser sends ``Accept-Language: fr-CA`` and has no language saved."""
    context = browser.new_context(base_url=live_server.base_url, locale="fr-CA")
    yield context.new_page()
    context.close()


def assert_french(page: Any, step: str) -> None:
    left = english_left(page.content())
    assert not left, f"{step} ({page.url}) still shows English: {left}"


def test_a_french_speaking_researcher_submits_a_script_and_reads_its_output(
    french_page: Any, screenshots: Path
) -> None:
    page, tag = french_page, uuid.uuid4().hex[:8]
    page.goto("/signin")
    expect(page.locator("html")).to_have_attribute("lang", "fr")
    assert_french(page, "sign-in page")
    sign_in(page)
    assert_french(page, "first page after signing in")

    page.get_by_role("link", name="Soumettre un script").click()
    page.wait_for_url(re.compile(r".*/submit/script$"))
    assert_french(page, "empty script form")
    page.fill("#script", SCRIPT.format(tag=tag))
    expect(page.locator("#directives")).to_contain_text(f"bonjour-{tag}")
    page.fill("#args", "monde")
    page.locator("#submit-area .actions button.secondary").click()
    expect(page.locator("#verdict .form-ok")).to_be_visible()
    assert_french(page, "script read and checked with the cluster")
    shot(page, screenshots, "french-01-script-checked")

    page.locator("#submit-area .actions button[type=submit]").click()
    page.wait_for_url(re.compile(r".*/jobs/\d+$"), timeout=60_000)
    expect(page.locator(STATUS_BADGE)).to_have_text("Terminé", timeout=120_000)
    expect(page.locator("#log-stdout")).to_contain_text(
        "bonjour, premier argument : monde", timeout=30_000
    )
    assert_french(page, "job page with its output")
    shot(page, screenshots, "french-02-job-output")

    page.get_by_role("link", name="Utilisation").click()
    page.wait_for_url(re.compile(r".*/usage$"))
    expect(page.locator("h1")).to_have_text("Utilisation")
    assert_french(page, "usage page")
    shot(page, screenshots, "french-03-usage")
