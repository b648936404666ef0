"""Path and query parameter types shared by the web pages and the API.

Ids are database integers; larger numbers are refused as invalid (422) instead of
overflowing the database driver (a 500), on both surfaces alike.
"""

from __future__ import annotations

from datetime import date
from typing import Annotated

from fastapi import Path

MAX_ID = 2**31 - 1

PathId = Annotated[int, Path(ge=1, le=MAX_ID)]

# Dates a report or filter can mean; beyond them date arithmetic overflows (year 9999 + a
# day) and the database refuses the value, so they are refused or ignored at the edge.
FIRST_DAY = date(1970, 1, 1)
LAST_DAY = date(2200, 12, 31)


def is_plausible_day(day: date) -> bool:
    return FIRST_DAY <= day <= LAST_DAY
