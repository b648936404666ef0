"""The shell page's pure parts: the window size frames the page sends, the idle limit in words,
and the page's Content-Security-Policy, which differs from the site's only by a style nonce."""

from __future__ import annotations

import pytest

from app.scheduler.terminals import TerminalSize
from app.security import CONTENT_SECURITY_POLICY
from app.web.shell import _in_words, _page_policy
from app.web.shell_relay import size_of


@pytest.mark.parametrize(
    ("frame", "size"),
    [
        ('{"columns": 120, "rows": 40}', TerminalSize(120, 40)),
        ('{"columns": "90", "rows": 20, "csrf": "x"}', TerminalSize(90, 20)),
        ('{"columns": 99999, "rows": 0}', TerminalSize(1000, 1)),
        ('{"columns": 80}', None),
        ('{"columns": "wide", "rows": 3}', None),
        ("[80, 24]", None),
        ("not json", None),
        ('{"columns": null, "rows": 1}', None),
    ],
)
def test_only_a_well_formed_size_frame_resizes(frame: str, size: TerminalSize | None) -> None:
    assert size_of(frame) == size


@pytest.mark.parametrize(
    ("seconds", "ended", "words"),
    [
        (1800, True, "The shell was closed after 30 minutes without input."),
        (60, True, "The shell was closed after 1 minute without input."),
        (1, True, "The shell was closed after 1 second without input."),
        (5, False, "It closes after 5 seconds without input, and when you leave this page."),
        (3600, False, "It closes after 60 minutes without input, and when you leave this page."),
    ],
)
def test_the_idle_limit_is_said_in_seconds_or_minutes(
    seconds: float, ended: bool, words: str
) -> None:
    assert _in_words(seconds, ended=ended) == words


def test_the_pages_policy_adds_only_a_style_nonce() -> None:
    policy = _page_policy("abc123")
    assert "style-src 'self' 'nonce-abc123';" in policy
    assert "unsafe-inline" not in policy
    assert policy.replace(" 'nonce-abc123'", "") == CONTENT_SECURITY_POLICY
