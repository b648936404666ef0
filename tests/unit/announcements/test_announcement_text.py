"""Announcement text: only http(s) addresses become links, and lengths of time in words."""

from __future__ import annotations

import pytest

from app.announcements.text import Segment, segments, spoken_duration
from app.i18n import use_locale


def test_an_address_becomes_a_link_and_the_full_stop_after_it_stays_text() -> None:
    assert segments("See https://status.example.org/maint?id=3. Thanks") == [
        Segment("See "),
        Segment("https://status.example.org/maint?id=3", "https://status.example.org/maint?id=3"),
        Segment(". Thanks"),
    ]


def test_markup_and_other_schemes_stay_plain_text() -> None:
    body = '<b>x</b> javascript:alert(1) ftp://x.org <a href="http://evil">'
    found = segments(body)
    links = [s.href for s in found if s.href]
    # The address ends at the quote: the attribute's markup never reaches the link.
    assert links == ["http://evil"]
    assert "".join(s.text for s in found) == body


def test_text_without_addresses_is_one_segment() -> None:
    assert segments("Quiet week.\nNo news.") == [Segment("Quiet week.\nNo news.")]


@pytest.mark.parametrize(
    ("minutes", "english", "french"),
    [
        (1, "1 minute", "1 minute"),
        (45, "45 minutes", "45 minutes"),
        (119, "119 minutes", "119 minutes"),
        (150, "2 hours", "2 heures"),
        (30 * 60 + 59, "30 hours", "30 heures"),
        (2 * 24 * 60, "2 days", "2 jours"),
        (3 * 24 * 60 + 5 * 60 + 7, "3 days 5 hours", "3 jours 5 heures"),
    ],
)
def test_lengths_of_time_are_said_rounded_down(minutes: int, english: str, french: str) -> None:
    with use_locale("en"):
        assert spoken_duration(minutes) == english
    with use_locale("fr"):
        assert spoken_duration(minutes) == french
