"""Pydantic's refusals of a page's address or form, in the reader's language."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from app import i18n
from app.i18n import _, ngettext


def _date_reasons() -> dict[str, str]:
    return {
        "input is too short": _("input is too short"),
        "input is too long": _("input is too long"),
        "invalid character in year": _("invalid character in year"),
        "invalid character in month": _("invalid character in month"),
        "invalid character in day": _("invalid character in day"),
        "month value is outside expected range of 1-12": _(
            "month value is outside expected range of 1-12"
        ),
        "day value is outside expected range": _("day value is outside expected range"),
    }


def _wordings(ctx: Mapping[str, Any]) -> dict[str, Callable[[], str]]:
    """Pydantic's messages for the refusals a page's address or form meets most often."""
    return {
        "missing": lambda: _("Field required"),
        "int_parsing": lambda: _(
            "Input should be a valid integer, unable to parse string as an integer"
        ),
        "bool_parsing": lambda: _("Input should be a valid boolean, unable to interpret input"),
        "greater_than_equal": lambda: _(
            "Input should be greater than or equal to %(minimum)s", minimum=ctx.get("ge")
        ),
        "less_than_equal": lambda: _(
            "Input should be less than or equal to %(maximum)s", maximum=ctx.get("le")
        ),
        "string_too_long": lambda: ngettext(
            "String should have at most %(num)d character",
            "String should have at most %(num)d characters",
            int(ctx.get("max_length", 0)),
        ),
        "date_from_datetime_parsing": lambda: _(
            "Input should be a valid date or datetime, %(reason)s",
            reason=_date_reasons().get(str(ctx.get("error")), str(ctx.get("error"))),
        ),
    }


def page_message(item: Mapping[str, Any]) -> str:
    """Pydantic's message for a refused value in the reader's language, when it is one we
    know word for word (in English the same message comes out); otherwise as it was said."""
    said = str(item.get("msg", "invalid"))
    wording = _wordings(item.get("ctx") or {}).get(str(item.get("type")))
    if wording is None:
        return said
    with i18n.use_locale(i18n.DEFAULT_LOCALE):
        english = wording()
    return wording() if english == said else said
