"""What an app's Set-Cookie may do in the browser: nothing to the portal's cookies or a
session host's, and nothing beyond the host that served it."""

from __future__ import annotations

import pytest

from app.web.app_relay import is_named_like, scoped_set_cookie

CREDENTIALS = frozenset({"portal_session", "portal_csrf", "hpcportal_app"})


@pytest.mark.parametrize(
    "header",
    [
        "portal_session=planted; Path=/",
        "Portal_Session=planted",
        "__Host-portal_session=planted; Path=/; Secure",
        "__Secure-portal_csrf=planted; Secure",
        " portal_csrf =planted",
        "hpcportal_app=someone-elses; Path=/; HttpOnly",
        "__Host-hpcportal_app=x; Path=/; Secure",
        "no-equals-sign",
    ],
)
def test_a_cookie_named_like_a_credential_is_never_relayed(header: str) -> None:
    assert scoped_set_cookie(header, CREDENTIALS) is None


@pytest.mark.parametrize(
    ("header", "relayed"),
    [
        ("_xsrf=2|abc; Path=/apps/sessions/u/", "_xsrf=2|abc; Path=/apps/sessions/u/"),
        ("theme=dark; Domain=portal.example.org; Path=/", "theme=dark; Path=/"),
        ("theme=dark;domain=.example.org;HttpOnly", "theme=dark;HttpOnly"),
        ("a=b; DOMAIN = example.org; Secure; SameSite=None", "a=b; Secure; SameSite=None"),
    ],
)
def test_an_apps_own_cookie_stays_on_the_host_that_served_it(header: str, relayed: str) -> None:
    assert scoped_set_cookie(header, CREDENTIALS) == relayed


def test_names_are_compared_without_case_or_storage_prefix() -> None:
    assert is_named_like("__HOST-Portal_Session", CREDENTIALS)
    assert not is_named_like("portal_session_theme", CREDENTIALS)
