"""Finds English left on a page rendered in French.

Three nets: every English message of the catalogue whose French differs (a marked message not
translated at render time); English-only words that French never uses (a string nobody
marked, or one built in Python with an f-string: "4 tasks ended", "up", "(user dave)", "GiB");
and figures or punctuation written the English way (``0.5`` for « 0,5 », ``cluster: up`` for
« grappe : disponible »), which come from formatting that bypassed the locale. Code, logs,
Slurm's own words and user data are not the interface's language: text inside ``<code>``,
``<pre>``, ``<samp>``, ``<kbd>``, ``<textarea>``, ``<time>``, scripts, styles and elements
marked ``translate="no"`` or ``lang="en"`` is left out.
"""

from __future__ import annotations

import re
from functools import lru_cache
from html.parser import HTMLParser

from babel.messages.pofile import read_po

from app import i18n

SKIPPED_TAGS = {"code", "pre", "samp", "kbd", "textarea", "time", "script", "style", "svg"}
VOID_TAGS = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "wbr"}
# Words of English sentences that are not French words ("on", "an", "or", "message" are).
ENGLISH_ONLY = {
    "the",
    "and",
    "your",
    "you",
    "with",
    "this",
    "that",
    "from",
    "have",
    "has",
    "was",
    "were",
    "will",
    "not",
    "job",
    "jobs",
    "submit",
    "cancel",
    "running",
    "pending",
    "completed",
    "failed",
    "sign",
    "settings",
    "template",
    "templates",
    "files",
    "usage",
    "when",
    "which",
    "there",
    "here",
    "what",
    "show",
    "more",
    "less",
    "yet",
    "who",
    "why",
    "how",
    "its",
    "it's",
    "don't",
    "can't",
    "cannot",
    "after",
    "before",
    "until",
    "been",
    "into",
    "open",
    "save",
    "delete",
    "upload",
    "download",
    "folder",
    "back",
    "next",
    "previous",
    "search",
    "filter",
    "apply",
    "clear",
    "none",
    "any",
    "all",
    "every",
    "each",
    "these",
    "those",
    "they",
    "them",
    "their",
    "our",
    "we",
    "is",
    "are",
    "be",
    "of",
    "to",
    "in",
    "for",
    "by",
    "at",
    "if",
    "it",
    "no",
    "yes",
    "home",
    "dashboard",
    "memory",
    "nodes",
    "tasks",
    "time",
    "limit",
    "state",
    "name",
    "output",
    "up",
    "down",
    "idle",
    "user",
    "ended",
    "kib",
    "mib",
    "gib",
    "tib",
}
# A word of prose: not part of an option (--time), a path (/home), a dotted name
# (parameters.0.name) or template syntax ({% if %}), which are not the interface's language.
WORD = re.compile(r"(?<![-/\w.{%$@])[^\W\d_](?:[^\W\d_]|['\u2019])*(?![-/\w]|\.\w)")


class _VisibleText(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.chunks: list[str] = []
        self._stack: list[bool] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in VOID_TAGS:
            self._attributes(dict(attrs), is_input=tag == "input")
            return
        values = dict(attrs)
        hidden = tag in SKIPPED_TAGS or values.get("translate") == "no"
        hidden = hidden or values.get("lang") == "en"
        self._stack.append(hidden or (bool(self._stack) and self._stack[-1]))
        if not self._stack[-1]:
            self._attributes(values)

    def _attributes(self, values: dict[str, str | None], *, is_input: bool = False) -> None:
        # What a screen reader or a tooltip says is part of the interface too.
        for name in ("aria-label", "title", "placeholder", "alt"):
            if values.get(name):
                self.chunks.append(str(values[name]))
        # A button input shows its value; a <button>'s value is only sent, never shown.
        if is_input and values.get("type") in ("submit", "button") and values.get("value"):
            self.chunks.append(str(values["value"]))

    def handle_endtag(self, tag: str) -> None:
        if tag not in VOID_TAGS and self._stack:
            self._stack.pop()

    def handle_data(self, data: str) -> None:
        if not (self._stack and self._stack[-1]):
            self.chunks.append(data)


def visible_text(html: str) -> str:
    parser = _VisibleText()
    parser.feed(html)
    return " ".join(" ".join(parser.chunks).split())


@lru_cache(maxsize=1)
def _untranslated_patterns() -> tuple[tuple[str, re.Pattern[str]], ...]:
    with (i18n.LOCALES_DIR / "fr" / "LC_MESSAGES" / "messages.po").open("rb") as source:
        catalog = read_po(source, locale="fr")
    patterns = []
    for message in catalog:
        english = message.id[0] if isinstance(message.id, tuple) else message.id
        french = message.string[0] if isinstance(message.string, tuple) else message.string
        if not english or english == french or len(WORD.findall(english)) < 2:
            continue
        parts = re.split(r"%\([a-z_]+\)[sdr]|<[^>]+>", " ".join(english.split()))
        pieces = [re.escape(part.strip()) for part in parts if part.strip()]
        if pieces and max(len(piece) for piece in pieces) >= 8:
            patterns.append((english, re.compile(r".{0,200}?".join(pieces))))
    return tuple(patterns)


# A figure with a decimal point (not a version such as 4.6.6 or an address).
ENGLISH_FIGURE = re.compile(r"(?<![\w./-])\d+\.\d+(?![\w.])")
# A word directly followed by a colon, semicolon, question or exclamation mark: French puts a
# no-break space before them.
TIGHT_PUNCTUATION = re.compile(r"[^\W\d_][:;?!](?=\s|$)")


def english_left(html: str) -> list[str]:
    """What on ``html`` is still English: catalogue messages, English-only words, then
    figures and punctuation written the English way."""
    text = visible_text(html)
    found = [english for english, pattern in _untranslated_patterns() if pattern.search(text)]
    words = {word.lower() for word in WORD.findall(text)}
    found += sorted(f"word: {word}" for word in words & ENGLISH_ONLY)
    found += sorted({f"figure: {figure}" for figure in ENGLISH_FIGURE.findall(text)})
    found += sorted({f"typography: {tight}" for tight in TIGHT_PUNCTUATION.findall(text)})
    return found
