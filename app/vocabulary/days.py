"""The days a report or filter can mean, on every surface and in the use cases alike."""

from __future__ import annotations

from datetime import date

# Beyond them date arithmetic overflows (year 9999 + a day) and the database refuses the
# value, so they are refused or ignored at the edge.
FIRST_DAY = date(1970, 1, 1)
LAST_DAY = date(2200, 12, 31)


def is_plausible_day(day: date) -> bool:
    return FIRST_DAY <= day <= LAST_DAY
