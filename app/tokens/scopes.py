"""Token scopes, what each one lets a request do, and how they relate to the owner's role."""

from __future__ import annotations

from collections.abc import Iterable

READ = "read"
SUBMIT = "submit"
ADMIN = "admin"
ALL_SCOPES = (READ, SUBMIT, ADMIN)

# Changing things is useless without seeing them, so the broader scopes include reading.
_IMPLIED: dict[str, frozenset[str]] = {
    READ: frozenset({READ}),
    SUBMIT: frozenset({READ, SUBMIT}),
    ADMIN: frozenset({READ, ADMIN}),
}


def unknown_scopes(scopes: Iterable[str]) -> list[str]:
    return sorted(set(scopes) - set(ALL_SCOPES))


def grantable_scopes(is_site_admin: bool) -> tuple[str, ...]:
    """The scopes a user may put on a token: never more than their role allows."""
    return ALL_SCOPES if is_site_admin else (READ, SUBMIT)


def effective_scopes(granted: Iterable[str], is_site_admin: bool) -> frozenset[str]:
    """What a token may do right now.

    Checked on every use, not only at creation: a token minted by an admin who has since
    lost the role keeps its other scopes but no longer carries admin powers.
    """
    expanded: set[str] = set()
    for scope in granted:
        expanded |= _IMPLIED.get(scope, frozenset())
    return frozenset(expanded) & frozenset(grantable_scopes(is_site_admin))
