"""Jinja2 templates with block rendering, so a page's named block doubles as an HTMX fragment."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from functools import lru_cache
from pathlib import Path
from typing import Any

from fastapi import Request
from fastapi.responses import Response
from jinja2_fragments.fastapi import Jinja2Blocks
from markupsafe import Markup

from app import i18n
from app.job_templates.values import DURATION_READING

# app/_templates is the top-level templates/ (a link in a checkout, copied when installed).
TEMPLATES_DIR = Path(__file__).resolve().parent / "_templates"


def is_htmx(request: Request) -> bool:
    """True when the request was made by htmx (and so wants a fragment, not a page)."""
    return request.headers.get("HX-Request") == "true"


def local_time(moment: datetime | None, *, seconds: bool = True) -> Markup:
    """A ``<time>`` in UTC that static/js/local-time.js rewrites into the reader's time zone,
    keeping the UTC reading as its title; a dash when there is no time."""
    if moment is None:
        return Markup("—")
    utc = moment.astimezone(UTC) if moment.tzinfo else moment.replace(tzinfo=UTC)
    shown = utc.strftime("%Y-%m-%d %H:%M:%S" if seconds else "%Y-%m-%d %H:%M") + " UTC"
    stamp = utc.isoformat(timespec="seconds").replace("+00:00", "Z")
    precision = "second" if seconds else "minute"
    return Markup('<time datetime="{}" title="{}" data-local-time="{}">{}</time>').format(
        stamp, shown, precision, shown
    )


def _template_gettext(message: str) -> str:
    # No formatting here: Jinja's new-style gettext fills %(name)s in after escaping.
    return i18n.translations(i18n.current_locale()).gettext(message)


def _template_ngettext(singular: str, plural: str, count: int) -> str:
    return i18n.translations(i18n.current_locale()).ngettext(singular, plural, count)


def create_templates(directory: Path = TEMPLATES_DIR) -> Any:
    templates = Jinja2Blocks(directory=str(directory))
    # Messages are translated when a page is rendered, in the request's language (app.i18n).
    templates.env.add_extension("jinja2.ext.i18n")
    templates.env.install_gettext_callables(  # type: ignore[attr-defined]
        gettext=_template_gettext, ngettext=_template_ngettext, newstyle=True
    )
    templates.env.globals["current_locale"] = i18n.current_locale
    templates.env.globals["site_name"] = "HPC Portal"
    templates.env.globals["duration_reading"] = DURATION_READING
    templates.env.filters["local_time"] = local_time
    return templates


@lru_cache(maxsize=1)
def templates() -> Any:
    """The application's shared template set (Jinja2Blocks), built once."""
    return create_templates()


def render(
    request: Request,
    name: str,
    context: Mapping[str, Any] | None = None,
    block: str | None = None,
    *,
    status_code: int = 200,
    headers: Mapping[str, str] | None = None,
) -> Response:
    """Render a whole page, or only ``block`` of it when a fragment is wanted."""
    values = dict(context or {})
    values.setdefault("is_htmx", is_htmx(request))
    response: Response = templates().TemplateResponse(
        request,
        name,
        values,
        status_code=status_code,
        headers=dict(headers) if headers else None,
        block_name=block,
    )
    return response
