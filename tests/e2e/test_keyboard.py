"""A job submitted with the keyboard alone, on the real cluster: every element reached with
Tab or Shift+Tab shows where the focus is, and a refused submit puts the focus on the error
summary. Nothing is clicked or filled by Playwright; it only presses keys and types."""

from __future__ import annotations

import contextlib
import re
import uuid
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError
from playwright.sync_api import expect

from tests.e2e.test_jobs_flow import STATUS_BADGE, shot

pytestmark = [pytest.mark.browser, pytest.mark.slurm]

MOST_PRESSES = 40
# What the focused element looks like: keyboard focus must match :focus-visible and draw an
# outline or a ring (a box shadow) that the reader can see.
FOCUS = """selector => {
  const element = document.activeElement;
  const style = getComputedStyle(element);
  const outlined = style.outlineStyle !== "none" && parseFloat(style.outlineWidth) >= 2;
  return {
    reached: element.matches(selector),
    shown: element.matches(":focus-visible") && (outlined || style.boxShadow !== "none"),
    element: element.outerHTML.slice(0, 160),
  };
}"""


# How long the focused element may take to draw its indicator: a key press returns once the
# event is dispatched, before a busy renderer has restyled the element it focused.
SETTLE_MS = 2_000


def _focus_shown(page: Any, selector: str) -> bool:
    focus = page.evaluate(FOCUS, selector)
    if not focus["shown"]:
        with contextlib.suppress(PlaywrightTimeoutError):
            page.wait_for_function(f"s => ({FOCUS})(s).shown", arg=selector, timeout=SETTLE_MS)
        focus = page.evaluate(FOCUS, selector)
    assert focus["shown"], f"no visible focus indicator on {focus['element']}"
    return bool(focus["reached"])


def move_focus_to(page: Any, selector: str, key: str = "Tab") -> None:
    """Presses ``key`` until ``selector`` has the focus, checking each stop on the way."""
    if page.evaluate("s => document.activeElement.matches(s)", selector):
        _focus_shown(page, selector)
        return
    for _ in range(MOST_PRESSES):
        page.keyboard.press(key)
        if _focus_shown(page, selector):
            return
    raise AssertionError(f"{key} never reached {selector}")


def replace_text(page: Any, selector: str, text: str, key: str = "Tab") -> None:
    move_focus_to(page, selector, key)
    page.keyboard.press("ControlOrMeta+A")
    page.keyboard.type(text)


def _sign_in_by_keyboard(page: Any, login: str) -> None:
    page.goto("/signin")
    replace_text(page, "#login", login)
    replace_text(page, "#password", f"{login}-demo")
    page.keyboard.press("Enter")
    page.wait_for_url(re.compile(r".*/templates.*|.*/$|.*/dashboard.*"))


def _open_hello_world_by_keyboard(page: Any) -> None:
    move_focus_to(page, ".site-nav a[href$='/templates']")
    page.keyboard.press("Enter")
    page.wait_for_url(re.compile(r".*/templates$"))
    use = page.get_by_role("link", name="Use Hello world").get_attribute("href")
    move_focus_to(page, f"a[href='{use}']")
    page.keyboard.press("Enter")
    page.wait_for_url(re.compile(r".*/templates/\d+/submit$"))


# Focus rings are checked the moment a key lands, which a starved Chromium misses: this one
# runs with the machine to itself.
@pytest.mark.alone
def test_a_job_is_submitted_with_the_keyboard_alone(page: Any, screenshots: Path) -> None:
    name = f"keys-{uuid.uuid4().hex[:6]}"
    _sign_in_by_keyboard(page, "alice")
    _open_hello_world_by_keyboard(page)

    replace_text(page, "#job_name", name)
    replace_text(page, "#seconds", "9999")
    page.keyboard.press("Enter")
    expect(page.locator("#seconds-error")).to_be_visible()
    expect(page.locator("#form-errors")).to_be_focused()
    _focus_shown(page, "#form-errors")
    shot(page, screenshots, "keyboard-01-refused")

    replace_text(page, "#seconds", "1")
    replace_text(page, "#message", "typed, never clicked", key="Shift+Tab")
    move_focus_to(page, "#submit-area button[type=submit]")
    shot(page, screenshots, "keyboard-02-submit-focused")
    page.keyboard.press("Space")
    page.wait_for_url(re.compile(r".*/jobs/\d+$"), timeout=60_000)
    expect(page.get_by_role("heading", level=1)).to_contain_text(name)
    expect(page.locator(STATUS_BADGE)).to_be_visible()
    expect(page.locator("dl.facts code", has_text="typed, never clicked")).to_be_visible()
