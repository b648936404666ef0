"""The accessibility audit itself: it reports what axe-core finds on a page as it loads, on a
page left at once for the next, and on an element an htmx swap put in, naming rule and URL."""

from __future__ import annotations

from typing import Any

import pytest

from tests.e2e.conftest import LiveServer

pytestmark = pytest.mark.browser

# Served in place of a portal page: an image without a text alternative is a violation axe-core
# always reports (image-alt), and the button swaps in a form field that has no label.
FAULTY = """<!doctype html><html lang="en"><head><title>Faulty</title>
<script src="/static/vendor/htmx.min.js"></script></head>
<body><main><h1>Faulty</h1><img src="/static/none.png">
<button hx-get="/a11y-fragment" hx-target="#slot" hx-swap="innerHTML">Load</button>
<div id="slot"></div></main></body></html>"""
FRAGMENT = '<div id="added"><input type="text" name="unlabelled"></div>'


def _serve_faulty(context: Any) -> None:
    def fulfil(route: Any) -> None:
        body = FRAGMENT if route.request.url.endswith("/a11y-fragment") else FAULTY
        route.fulfill(status=200, content_type="text/html", body=body)

    # Routes added last are asked first: these answer before the audit holds the request.
    context.route("**/a11y-faulty", fulfil)
    context.route("**/a11y-fragment", fulfil)


def test_violations_on_load_on_leaving_and_after_a_swap_are_reported(
    browser: Any, live_server: LiveServer
) -> None:
    context = browser.new_context(base_url=live_server.base_url)
    page = context.new_page()
    _serve_faulty(context)

    page.goto("/a11y-faulty")
    page.get_by_role("button", name="Load").click()
    page.locator("#added input").wait_for()
    # Left at once: the navigation waits until the page as it was left has been scanned.
    page.goto("/signin")
    page.locator("#login").wait_for()
    context.close()

    found = browser.audit.failure()
    assert found is not None
    assert "image-alt (critical)" in found
    assert f"{live_server.base_url}/a11y-faulty [page]" in found
    faulty = f"{live_server.base_url}/a11y-faulty"
    assert f"label (critical) on {faulty} [after an htmx swap of #slot]" in found
    # The sign-in page it went on to has nothing to report, and nothing is reported twice.
    assert "/signin" not in found
    assert browser.audit.failure() is None


# A page whose deferred script never arrives: it is parsed, but DOMContentLoaded waits for the
# script, and the navigation away aborts the document before it could ever fire.
UNFINISHED = """<!doctype html><html lang="en"><head><title>Unfinished</title>
<script defer src="/a11y-never.js"></script></head>
<body><main><h1>Unfinished</h1><img src="/static/none.png">
<form action="/signin"><button type="submit">Leave</button></form></main></body></html>"""


def test_a_page_left_before_its_deferred_scripts_arrived_is_scanned_as_it_was_left(
    browser: Any, live_server: LiveServer
) -> None:
    context = browser.new_context(base_url=live_server.base_url)
    page = context.new_page()
    context.route(
        "**/a11y-unfinished",
        lambda route: route.fulfill(status=200, content_type="text/html", body=UNFINISHED),
    )
    context.route("**/a11y-never.js", lambda route: None)  # left pending: never answered

    page.goto("/a11y-unfinished", wait_until="commit")
    # Parsed (so the audit has heard the page open), its deferred script still on the way.
    page.wait_for_function("() => document.readyState === 'interactive'")
    page.get_by_role("button", name="Leave").click()
    page.locator("#login").wait_for()
    context.close()

    found = browser.audit.failure()
    assert found is not None
    assert "left-unscanned" not in found
    assert f"image-alt (critical) on {live_server.base_url}/a11y-unfinished [page]" in found
