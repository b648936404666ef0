"""Opaque cursors: clients pass them back unchanged and must not build them."""

from __future__ import annotations

from fastapi import Request

from app.api.v1.errors import BadRequest
from app.params import BadCursor, encode_cursor
from app.params import decode_cursor as decode


def decode_cursor(cursor: str | None) -> int | None:
    try:
        return decode(cursor)
    except BadCursor:
        raise BadRequest("The cursor is not one this API gave out.") from None


def next_page(request: Request, after: int | None) -> tuple[str | None, str | None]:
    """(cursor, URL) of the page after ``after``; (None, None) on the last page."""
    if after is None:
        return None, None
    cursor = encode_cursor(after)
    return cursor, str(request.url.include_query_params(cursor=cursor))
