"""Path and query parameter types shared by the web pages and the API.

Ids are database integers; larger numbers are refused as invalid (422) instead of
overflowing the database driver (a 500), on both surfaces alike.
"""

from __future__ import annotations

import base64
import binascii
from typing import Annotated

from fastapi import Path

MAX_ID = 2**31 - 1

PathId = Annotated[int, Path(ge=1, le=MAX_ID)]


class BadCursor(ValueError):
    """A page cursor this portal did not give out."""


_CURSOR_PREFIX = "job:"


def encode_cursor(last_id: int) -> str:
    """The opaque cursor of the page after ``last_id``, the same on the pages and the API."""
    return base64.urlsafe_b64encode(f"{_CURSOR_PREFIX}{last_id}".encode()).decode().rstrip("=")


def decode_cursor(cursor: str | None) -> int | None:
    """The id a cursor pages below; None for the first page; BadCursor if it is not ours."""
    if not cursor:
        return None
    try:
        padded = cursor + "=" * (-len(cursor) % 4)
        text = base64.urlsafe_b64decode(padded.encode("ascii")).decode()
    except (binascii.Error, UnicodeError, ValueError):
        raise BadCursor(cursor) from None
    number = text.removeprefix(_CURSOR_PREFIX)
    if not text.startswith(_CURSOR_PREFIX) or not number.isdigit() or len(number) > 18:
        raise BadCursor(cursor)
    return int(number)
