"""Month abbreviations as PBS's and LSF's commands print them (C locale), by number."""

from __future__ import annotations

MONTH_NAMES = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
MONTHS = {name: number for number, name in enumerate(MONTH_NAMES, 1)}
