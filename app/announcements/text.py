"""Announcement text as readers see it: plain text with web addresses made into links,
and the words for a maintenance window, in the reader's language."""

from __future__ import annotations

import re
from dataclasses import dataclass

from app.i18n import _, ngettext

# Only http(s) addresses become links; trailing punctuation ends the sentence, not the link.
_ADDRESS = re.compile(r"https?://[^\s<>\"'`]+", re.IGNORECASE)
_TRAILING = ".,;:!?)]}'\""


@dataclass(frozen=True, slots=True)
class Segment:
    """A piece of an announcement: text, or a link whose text is its address."""

    text: str
    href: str | None = None


def segments(body: str) -> list[Segment]:
    """``body`` cut into text and links; the template escapes every piece."""
    pieces: list[Segment] = []
    position = 0
    for match in _ADDRESS.finditer(body):
        address = match.group(0).rstrip(_TRAILING)
        if match.start() > position:
            pieces.append(Segment(body[position : match.start()]))
        pieces.append(Segment(address, address))
        position = match.start() + len(address)
    if position < len(body):
        pieces.append(Segment(body[position:]))
    return pieces


def spoken_duration(minutes: int) -> str:
    """A length of time as people say it: whole days (and hours) from two days up, whole
    hours from two hours up, minutes below; always rounded down."""
    minutes = max(0, minutes)
    if minutes < 120:
        return ngettext("%(num)d minute", "%(num)d minutes", minutes)
    hours = minutes // 60
    if hours < 48:
        return ngettext("%(num)d hour", "%(num)d hours", hours)
    days, rest = divmod(hours, 24)
    spoken_days = ngettext("%(num)d day", "%(num)d days", days)
    if not rest:
        return spoken_days
    return _(
        "%(days)s %(hours)s",
        days=spoken_days,
        hours=ngettext("%(num)d hour", "%(num)d hours", rest),
    )
