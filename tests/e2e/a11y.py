"""axe-core on every state of every portal page a Chromium test visits.

The ``browser`` fixture hands out an ``AuditedBrowser``: every context it opens runs the
vendored axe-core (``vendor/axe.min.js``, see ``vendor/README.md``) through ``a11y.js`` after
each page load and each htmx settle, and once more as a page is left if its own scripts
changed it. Nothing is lost to a test that moves on at once: an htmx request waits in the page
until the scans are done, and a navigation away waits here, in a route, until the page says
(from ``beforeunload``) that it has been scanned as it was left. The route cannot ask the
page itself: Playwright does not evaluate in a frame whose navigation has started. The
``pytest_runtest_call`` hook in ``conftest.py`` then fails the test, listing every violation.
"""

from __future__ import annotations

import contextlib
import json
import re
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from playwright.sync_api import Error as PlaywrightError

HERE = Path(__file__).resolve().parent
AXE_SOURCE = HERE / "vendor" / "axe.min.js"
RUNNER = HERE / "a11y.js"
MESSAGE_PREFIX = "__a11y__"
SETTLED = "() => window.__a11y ? window.__a11y.settled() : null"
# Only what can be a portal page is held for a look; assets, the JSON API, JupyterLab and the
# pieces of an upload go straight through instead of each making a round trip to the test.
PAGE_URLS = re.compile(r"^https?://[^/]+/(?!static/|api/|apps/sessions/|files/[^/]+/uploads/)")
# A scan takes a second at most on a quiet machine, several when the suite loads both cores;
# this is only reached if a page never said it was left, and
# stays below the tests' own navigation timeouts so that the report names the reason.
LEAVE_DEADLINE = 27.0
LEAVE_POLL_MS = 20
UNSCANNED = {
    "id": "left-unscanned",
    "impact": "unknown",
    "help": f"The page was left and did not say within {LEAVE_DEADLINE:.0f} s that it was scanned",
    "helpUrl": "tests/e2e/a11y.py",
    "targets": [],
}


@dataclass(frozen=True)
class Violation:
    url: str
    state: str
    rule: str
    impact: str
    help: str
    help_url: str
    targets: tuple[str, ...]

    def describe(self) -> str:
        where = "\n".join(f"      {target}" for target in self.targets)
        return (
            f"  {self.rule} ({self.impact}) on {self.url} [{self.state}]\n"
            f"    {self.help} <{self.help_url}>\n{where}"
        )


def _runner_script() -> str:
    return RUNNER.read_text().replace("/*AXE_SOURCE*/", AXE_SOURCE.read_text())


def _navigated_page(request: Any) -> Any | None:
    """The page whose top document ``request`` replaces, if it replaces one."""
    if not request.is_navigation_request():
        return None
    try:
        frame = request.frame
    except PlaywrightError:  # a service worker's request belongs to no page
        return None
    return frame.page if frame.parent_frame is None else None


class Audit:
    """The violations found in the contexts it watches, one test's worth."""

    def __init__(self) -> None:
        self.violations: list[Violation] = []
        self._contexts: list[Any] = []
        self._script = _runner_script()
        self._documents: dict[Any, str | None] = {}
        # Counted by page, not by document: the test may start a navigation before the new
        # document's "open" message has arrived here, and each navigation a page starts is
        # preceded by one beforeunload, whichever document it fires in.
        self._leaves_heard: Counter[Any] = Counter()
        self._leaves_held: Counter[Any] = Counter()

    def watch(self, context: Any) -> None:
        context.on("console", self._hear)
        context.add_init_script(self._script)
        context.route(PAGE_URLS, self._hold_navigation)
        self._contexts.append(context)

    def settle(self, context: Any) -> None:
        for page in context.pages:
            # Closed, or already replaced by a navigation the page started itself.
            with contextlib.suppress(PlaywrightError):
                page.main_frame.evaluate(SETTLED)

    def settle_all(self) -> None:
        for context in self._contexts:
            self.settle(context)

    def failure(self) -> str | None:
        """What was found since the last call, or None; each violation is reported once."""
        if not self.violations:
            return None
        described = dict.fromkeys(violation.describe() for violation in self.violations)
        self.violations.clear()
        return f"{len(described)} accessibility violation(s) found by axe-core:\n" + "\n".join(
            described
        )

    def _hear(self, console_message: Any) -> None:
        text = console_message.text
        if not text.startswith(MESSAGE_PREFIX):
            return
        message = json.loads(text.removeprefix(MESSAGE_PREFIX))
        if message["kind"] == "open":
            page = console_message.page
            self._documents[page] = message["doc"]
            # A new document means every earlier navigation of this page is over: a leave heard
            # beyond those held was for one the audit did not hold (answered by a test's own
            # route, say) and must not stand in for the next one's.
            self._leaves_heard[page] = min(self._leaves_heard[page], self._leaves_held[page])
        elif message["kind"] == "left":
            self._leaves_heard[console_message.page] += 1
        else:
            self._record(message)

    def _record(self, found: dict[str, Any]) -> None:
        for violation in found["violations"]:
            self.violations.append(
                Violation(
                    url=found["url"],
                    state=found["state"],
                    rule=violation["id"],
                    impact=violation["impact"] or "unknown",
                    help=violation["help"],
                    help_url=violation["helpUrl"],
                    targets=tuple(violation["targets"]),
                )
            )

    def _hold_navigation(self, route: Any) -> None:
        page = _navigated_page(route.request)
        document = self._documents.get(page) if page is not None else None
        if document is not None:
            self._leaves_held[page] += 1
            self._wait_until_left(page)
        # The context may have closed while the request waited.
        with contextlib.suppress(PlaywrightError):
            route.fallback()

    def _wait_until_left(self, page: Any) -> None:
        deadline = time.monotonic() + LEAVE_DEADLINE
        while self._leaves_heard[page] < self._leaves_held[page]:
            if time.monotonic() > deadline:
                self._record({"url": page.url, "state": "left", "violations": [UNSCANNED]})
                return
            try:
                page.wait_for_timeout(LEAVE_POLL_MS)
            except PlaywrightError:  # closed: nothing is left to wait for
                return


class AuditedContext:
    """A browser context whose pages are scanned one last time before it closes."""

    def __init__(self, context: Any, audit: Audit) -> None:
        self._context = context
        self._audit = audit

    def close(self, **options: Any) -> None:
        self._audit.settle(self._context)
        self._context.close(**options)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._context, name)


class AuditedBrowser:
    """Chromium, with every context and page it opens watched by ``audit``."""

    def __init__(self, browser: Any, audit: Audit) -> None:
        self._browser = browser
        self.audit = audit

    def new_context(self, **options: Any) -> AuditedContext:
        context = self._browser.new_context(**options)
        self.audit.watch(context)
        return AuditedContext(context, self.audit)

    def new_page(self, **options: Any) -> Any:
        page = self._browser.new_page(**options)
        self.audit.watch(page.context)
        return page

    def close(self) -> None:
        self.audit.settle_all()
        self._browser.close()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._browser, name)
