"""Screenshots of what the browser tests saw, for people to look at.

A screenshot is a record, not an assertion, so it must not be what fails a test. Chromium
paints nothing while the page's main thread is busy, and axe-core's scan of a page state
(``a11y.js``) can hold it for seconds when the suite loads both cores: the scans are let
finish first. Even then headless Chromium now and then never delivers the frame a capture
waits for (Playwright issues 32849 and 33330); one more capture, after the page is brought to
the front, has always been answered.
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

from tests.e2e.a11y import SETTLED

FIRST_CAPTURE_MS = 15_000


def shot(target: Any, screenshots: Path, name: str, *, full_page: bool = True) -> None:
    """Save ``target`` (a page, or a locator with ``full_page=False``) as ``<name>.png``."""
    page = getattr(target, "page", target)
    path = str(screenshots / f"{name}.png")
    options: dict[str, Any] = {"full_page": True} if full_page else {}
    with contextlib.suppress(PlaywrightError):  # a third-party page has no scans to wait for
        page.main_frame.evaluate(SETTLED)
    try:
        target.screenshot(path=path, timeout=FIRST_CAPTURE_MS, **options)
    except PlaywrightTimeoutError:
        page.bring_to_front()
        target.screenshot(path=path, **options)
