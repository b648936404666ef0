"""Kept fragments: rendered once per key, the oldest let go, unhashable keys never kept."""

from __future__ import annotations

from markupsafe import Markup

from app.fragments import Fragments


def test_a_fragment_is_rendered_once_per_key_and_the_oldest_are_let_go() -> None:
    kept = Fragments(kept=2)
    rendered: list[str] = []

    def render(name: str) -> Markup:
        rendered.append(name)
        return Markup("<td>{}</td>").format(name)

    assert kept.get_or_render("a", lambda: render("a")) == Markup("<td>a</td>")
    assert kept.get_or_render("a", lambda: render("a")) == Markup("<td>a</td>")
    kept.get_or_render("b", lambda: render("b"))
    kept.get_or_render("c", lambda: render("c"))  # "a", the oldest, is let go
    assert len(kept) == 2
    kept.get_or_render("b", lambda: render("b"))
    kept.get_or_render("a", lambda: render("a"))
    assert rendered == ["a", "b", "c", "a"]


def test_a_key_that_cannot_be_hashed_is_rendered_every_time_and_not_kept() -> None:
    kept = Fragments(kept=4)
    calls: list[int] = []

    def render() -> Markup:
        calls.append(1)
        return Markup("<td>x</td>")

    key = ("row", ["not", "hashable"])
    for _ in range(3):
        assert kept.get_or_render(key, render) == Markup("<td>x</td>")
    assert len(calls) == 3 and len(kept) == 0
