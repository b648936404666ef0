"""Disk usage and quotas: what a user stores on each filesystem against its limits.

The figures come from a command the site chooses (``quota``, ``lfs quota``, a
``diskusage_report``-style script), run as the user on the login host;
``app.scheduler.disk_usage_parsing`` reads its output into the value objects here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal, get_args

DiskUsageFormat = Literal["auto", "quota", "lfs", "diskusage_report"]
DISK_USAGE_FORMATS: tuple[str, ...] = get_args(DiskUsageFormat)


@dataclass(frozen=True, slots=True)
class QuotaFigures:
    """The use of one resource (bytes of space, or a number of files) and its limits.

    A limit of None means there is none (the tools print 0). ``grace`` is the time left
    to get back under the soft limit as the tool wrote it (``6days``, ``23:59``), or
    ``expired``; None when not over the soft limit.
    """

    used: int
    soft: int | None = None
    hard: int | None = None
    grace: str | None = None
    is_marked_over: bool = False
    """The tool itself flagged this figure (the ``*`` of ``quota`` and ``lfs quota``)."""

    @property
    def limit(self) -> int | None:
        """The limit met first: the soft quota when there is one, else the hard limit."""
        return self.soft or self.hard

    @property
    def is_over(self) -> bool:
        """Over the soft quota, at the hard limit, or flagged by the tool."""
        if self.is_marked_over:
            return True
        if self.hard is not None and self.used >= self.hard:
            return True
        return self.soft is not None and self.used > self.soft


@dataclass(frozen=True, slots=True)
class FilesystemUsage:
    """One filesystem's figures for one user (or group), as one line of the tool's output."""

    filesystem: str
    """The name the tool printed: a device, a mount point or a description."""
    space: QuotaFigures
    """In bytes."""
    files: QuotaFigures
    raw: str
    """The line(s) of output these figures were read from."""
    quota_of: str = ""
    """Whose quota, when the tool says (``user alice``, ``group physics``)."""

    @property
    def is_over(self) -> bool:
        """Over quota on space or on files."""
        return self.space.is_over or self.files.is_over

    @property
    def label(self) -> str:
        """The filesystem with whose quota it is, e.g. ``/dev/sdb1 (user alice)``."""
        return f"{self.filesystem} ({self.quota_of})" if self.quota_of else self.filesystem


_BINARY_PREFIXES = "KMGTPE"
# A number, then an optional unit: K, Ki, KiB, KB (any case), or B for bytes.
_SIZE = re.compile(r"(\d+(?:\.\d+)?)\s?(?:([kmgtpe])(i?)(b?)|(b))?", re.IGNORECASE)
_COUNT = re.compile(r"(\d+(?:\.\d+)?)([kmgt]?)", re.IGNORECASE)


BINARY_UNITS = ("B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB")


def binary_scale(amount: int) -> tuple[float, str]:
    """``amount`` bytes in the largest binary unit that keeps it at 1 or more."""
    value, unit = float(amount), 0
    while value >= 1024 and unit < len(BINARY_UNITS) - 1:
        value, unit = value / 1024, unit + 1
    return value, BINARY_UNITS[unit]


def size_in_bytes(text: str, *, bare_unit: int = 1) -> int:
    """``1024M``, ``2.1GiB``, ``5T``, ``109k`` in bytes; a bare number counts ``bare_unit``.

    A letter alone or with ``i`` is binary (K = 1024), as ``quota -s``, ``lfs quota -h``
    and ``diskusage_report`` print it; a letter with ``B`` and no ``i`` (``GB``) is decimal.
    Raises ValueError for anything else.
    """
    found = _SIZE.fullmatch(text.strip())
    if found is None:
        raise ValueError(f"not a size: {text!r}")
    number, prefix, binary, byte, bytes_only = found.groups()
    value = float(number)
    if bytes_only:
        return round(value)
    if not prefix:
        return round(value * bare_unit)
    power = _BINARY_PREFIXES.index(prefix.upper()) + 1
    base = 1000 if byte and not binary else 1024
    return round(value * float(base) ** power)


def count_of(text: str) -> int:
    """``4953``, ``500k``, ``1.2m``: a number of files (the suffixes count thousands)."""
    found = _COUNT.fullmatch(text.strip())
    if found is None:
        raise ValueError(f"not a number of files: {text!r}")
    number, suffix = found.groups()
    power = "kmgt".index(suffix.lower()) + 1 if suffix else 0
    return round(float(number) * 1000.0**power)
