"""Opaque cursors: clients pass them back unchanged and must not build them."""

from __future__ import annotations

import base64
import binascii

from fastapi import Request

from app.api.v1.errors import BadRequest

_PREFIX = "job:"


def encode_cursor(last_id: int) -> str:
    return base64.urlsafe_b64encode(f"{_PREFIX}{last_id}".encode()).decode().rstrip("=")


def decode_cursor(cursor: str | None) -> int | None:
    if cursor is None or cursor == "":
        return None
    try:
        padded = cursor + "=" * (-len(cursor) % 4)
        text = base64.urlsafe_b64decode(padded.encode("ascii")).decode()
    except (binascii.Error, UnicodeError, ValueError):
        raise BadRequest("The cursor is not one this API gave out.") from None
    number = text.removeprefix(_PREFIX)
    if not text.startswith(_PREFIX) or not number.isdigit() or len(number) > 18:
        raise BadRequest("The cursor is not one this API gave out.")
    return int(number)


def next_page(request: Request, after: int | None) -> tuple[str | None, str | None]:
    """(cursor, URL) of the page after ``after``; (None, None) on the last page."""
    if after is None:
        return None, None
    cursor = encode_cursor(after)
    return cursor, str(request.url.include_query_params(cursor=cursor))
