"""Parsers for the value formats researchers type into submit forms.

Each parser returns the portal's own unit (minutes, megabytes) or raises ValueError with a
sentence, in the current language, that can be shown next to the field as it is.
"""

from __future__ import annotations

import math
import re

from app.i18n import _, lazy_gettext

_DURATION = re.compile(
    r"(?:(?P<days>\d{1,3})-)?(?P<a>\d{1,5})(?::(?P<b>\d{1,2}))?(?::(?P<c>\d{1,2}))?"
)
_MEMORY = re.compile(r"(?P<amount>\d{1,9}(?:\.\d{1,3})?)\s*(?P<unit>[KMGT]?)(?:B|b|iB)?", re.I)
_MB_PER_UNIT = {"K": 1 / 1024, "": 1, "M": 1, "G": 1024, "T": 1024 * 1024}
# Shown under every duration field, in the language of the page.
DURATION_READING = lazy_gettext(
    "As sbatch reads it: 90 is 90 minutes, 1:30:00 an hour and a half, 2-00:00:00 two days; "
    "1:30 is 1 minute 30 seconds."
)


def _duration_hint() -> str:
    return _("use minutes or H:MM:SS as sbatch does, for example 90, 1:30:00 or 2-00:00:00")


def _clock_seconds(days: int, parts: list[int]) -> int:
    # Slurm reads "M", "M:S", "H:M:S" without days and "D-H", "D-H:M", "D-H:M:S" with them.
    if days:
        hours, minutes, seconds = [*parts, 0, 0][:3]
    elif len(parts) == 1:
        hours, minutes, seconds = 0, parts[0], 0
    elif len(parts) == 2:
        hours, minutes, seconds = 0, parts[0], parts[1]
    else:
        hours, minutes, seconds = parts
    if (minutes > 59 and (days or len(parts) > 1)) or seconds > 59:
        raise ValueError(_duration_hint())
    return ((days * 24 + hours) * 60 + minutes) * 60 + seconds


def parse_duration(text: str) -> int:
    """``1:30:00`` → 90; ``2-00:00:00`` → 2880. Seconds round up, as Slurm does."""
    match = _DURATION.fullmatch(text.strip())
    if match is None:
        raise ValueError(_duration_hint())
    days = int(match["days"] or 0)
    parts = [int(part) for part in (match["a"], match["b"], match["c"]) if part is not None]
    seconds = _clock_seconds(days, parts)
    if seconds <= 0:
        raise ValueError(_("must be longer than zero"))
    return math.ceil(seconds / 60)


def format_duration(minutes: int) -> str:
    """90 → ``1:30:00``; 2880 → ``2-00:00:00`` (the way Slurm prints limits)."""
    days, rest = divmod(minutes, 24 * 60)
    hours, mins = divmod(rest, 60)
    clock = f"{hours}:{mins:02d}:00" if not days else f"{hours:02d}:{mins:02d}:00"
    return f"{days}-{clock}" if days else clock


def parse_memory(text: str) -> int:
    """``4G`` → 4096; ``32000M`` → 32000; a bare number is megabytes, as in sbatch."""
    match = _MEMORY.fullmatch(text.strip())
    if match is None:
        raise ValueError(_("use a number with a unit, for example 4G or 32000M"))
    megabytes = float(match["amount"]) * _MB_PER_UNIT[match["unit"].upper()]
    if megabytes < 1:
        raise ValueError(_("must be at least %(least)s", least="1M"))
    return math.ceil(megabytes)


def format_memory(megabytes: int) -> str:
    if megabytes % 1024 == 0:
        return f"{megabytes // 1024}G"
    return f"{megabytes}M"
