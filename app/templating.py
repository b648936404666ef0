"""Jinja2 templates with block rendering, so a page's named block doubles as an HTMX fragment."""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping
from datetime import UTC, datetime
from functools import lru_cache
from pathlib import Path
from typing import Any
from weakref import WeakKeyDictionary

from fastapi import Request
from fastapi.responses import Response
from jinja2 import Environment, pass_context, pass_environment
from jinja2_fragments.fastapi import Jinja2Blocks
from markupsafe import Markup
from starlette.datastructures import URL, URLPath

from app import i18n
from app.fragments import Fragments
from app.job_templates.values import DURATION_READING

# app/_templates is the top-level templates/ (a link in a checkout, copied when installed).
TEMPLATES_DIR = Path(__file__).resolve().parent / "_templates"


def is_htmx(request: Request) -> bool:
    """True when the request was made by htmx (and so wants a fragment, not a page)."""
    return request.headers.get("HX-Request") == "true"


# Rendered rows kept per web worker: a few pages' worth for every reader of a busy site.
FRAGMENTS_KEPT = 4096
_FRAGMENTS = Fragments(FRAGMENTS_KEPT)


def local_time(moment: datetime | None, *, seconds: bool = True) -> Markup:
    """A ``<time>`` in UTC that static/js/local-time.js rewrites into the reader's time zone,
    keeping the UTC reading as its title; a dash when there is no time."""
    if moment is None:
        return Markup("—")
    return _time_element(moment, seconds)


# A job list shows the same submission times on every refresh: each is formatted once.
@lru_cache(maxsize=FRAGMENTS_KEPT)
def _time_element(moment: datetime, seconds: bool) -> Markup:
    utc = moment.astimezone(UTC) if moment.tzinfo else moment.replace(tzinfo=UTC)
    shown = utc.strftime("%Y-%m-%d %H:%M:%S" if seconds else "%Y-%m-%d %H:%M") + " UTC"
    stamp = utc.isoformat(timespec="seconds").replace("+00:00", "Z")
    precision = "second" if seconds else "minute"
    # Digits, dashes, colons and letters from strftime and isoformat only: nothing to escape,
    # so no Markup.format (a job list calls this for every row).
    return Markup(  # noqa: S704
        f'<time datetime="{stamp}" title="{shown}" data-local-time="{precision}">{shown}</time>'
    )


@pass_context
def _url_for(context: Any, name: str, /, **path_params: Any) -> URL:
    """Starlette's ``url_for`` with the route lookup remembered per application: finding a
    route by name walks every router, and a page asks for the same few (its static files,
    the navigation) on every request. Routes do not change once the application is built;
    the host part still comes from each request."""
    request: Request = context["request"]
    provider = request.scope.get("router") or request.scope["app"]
    known = _URL_PATHS.setdefault(request.scope["app"], {})
    key = (name, tuple(sorted(path_params.items())))
    path: URLPath | None
    try:
        path = known.get(key)
    except TypeError:  # a parameter that cannot be a key: looked up every time
        path = provider.url_path_for(name, **path_params)
        return path.make_absolute_url(base_url=request.base_url)
    if path is None:
        path = provider.url_path_for(name, **path_params)
        if len(known) < _URL_PATHS_KEPT:
            known[key] = path
    return path.make_absolute_url(base_url=request.base_url)


_RouteKey = tuple[str, tuple[tuple[str, Any], ...]]
# Per application (tests build many), the path of each (route name, parameters) found.
_URL_PATHS: WeakKeyDictionary[Any, dict[_RouteKey, URLPath]] = WeakKeyDictionary()
_URL_PATHS_KEPT = 1024


def _template_gettext(message: str) -> str:
    # No formatting here: Jinja's new-style gettext fills %(name)s in after escaping.
    return i18n.translations(i18n.current_locale()).gettext(message)


def _template_ngettext(singular: str, plural: str, count: int) -> str:
    return i18n.translations(i18n.current_locale()).ngettext(singular, plural, count)


def _two_decimals(value: float) -> str:
    return i18n.format_number(value, "#,##0.00")


def _template_pgettext(context: str, message: str) -> str:
    return i18n.translations(i18n.current_locale()).pgettext(context, message)


@pass_context
def _shell_clusters(context: Any) -> tuple[str, ...]:
    """The clusters where the signed-in reader may open a shell, for the navigation."""
    services = getattr(context["request"].app.state, "services", None)
    actor = context.get("actor")
    return () if services is None or actor is None else services.shells.clusters_for(actor)


@pass_environment
def _cached_macro_each(
    env: Environment, template: str, macro: str, items: Iterable[Hashable], *args: Hashable
) -> Markup:
    """``macro`` of ``template`` called with each item and ``args``, one line each, every
    distinct call rendered once per language (app/fragments.py).

    Only for macros whose output depends on their arguments and the language alone: they
    see no request and no page context. A row whose job changed in any shown way is a new
    key and is rendered again.
    """
    locale = i18n.current_locale()
    render = getattr(env.get_template(template).module, macro)
    return Markup("\n").join(
        _FRAGMENTS.get_or_render(
            (env, template, macro, locale, item, args),
            lambda item=item: _checked(template, macro, render(item, *args)),  # type: ignore[misc]
        )
        for item in items
    )


def _checked(template: str, macro: str, rendered: object) -> Markup:
    if not isinstance(rendered, Markup):  # only an autoescaping template's macro is safe
        raise TypeError(f"{template}: {macro} did not render escaped markup")
    return rendered


def create_templates(directory: Path = TEMPLATES_DIR) -> Any:
    templates = Jinja2Blocks(directory=str(directory))
    # Messages are translated when a page is rendered, in the request's language (app.i18n).
    templates.env.add_extension("jinja2.ext.i18n")
    templates.env.install_gettext_callables(  # type: ignore[attr-defined]
        gettext=_template_gettext,
        ngettext=_template_ngettext,
        pgettext=_template_pgettext,
        newstyle=True,
    )
    templates.env.globals["current_locale"] = i18n.current_locale
    templates.env.globals["site_name"] = "HPC Portal"
    templates.env.globals["duration_reading"] = DURATION_READING
    templates.env.filters["local_time"] = local_time
    templates.env.filters["percent"] = i18n.format_share
    templates.env.filters["figure"] = _two_decimals
    templates.env.globals["url_for"] = _url_for
    templates.env.globals["shell_clusters"] = _shell_clusters
    templates.env.globals["cached_macro_each"] = _cached_macro_each
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
