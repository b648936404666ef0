"""The template language of job scripts: parameter references and conditionals, nothing else.

``{{ name }}`` inserts a parameter; ``{% if name %}``, ``{% if not name %}``, ``{% else %}``
and ``{% endif %}`` keep or drop text by a parameter's truthiness; ``{# ... #}`` is a comment.
There are no loops, calls, filters or expressions, so rendering is one linear pass over the
source: a template cannot stall the server or allocate more than its own size plus its
values, whoever wrote it (ADR 0009). The syntax is a subset of Jinja's, so existing templates
that used only these forms keep working.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from app.i18n import _

_TAG = re.compile(r"\{\{(?P<ref>.*?)\}\}|\{%(?P<stmt>.*?)%\}|\{#.*?#\}", re.DOTALL)
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_IF = re.compile(r"if\s+(?P<negate>not\s+)?(?P<name>[A-Za-z_][A-Za-z0-9_]*)")
MAX_DEPTH = 16
_IF_TAG = "{% if %}"


class TemplateSyntaxError(ValueError):
    """The source is not a valid script template; the message says where and why."""


@dataclass(frozen=True, slots=True)
class Ref:
    """A parameter reference, resolved to a value when the template is rendered."""

    name: str


@dataclass(frozen=True, slots=True)
class _If:
    name: str
    negate: bool
    then: tuple[Node, ...]
    otherwise: tuple[Node, ...]


Node = str | Ref | _If


@dataclass(frozen=True, slots=True)
class Template:
    nodes: tuple[Node, ...]

    def names(self) -> set[str]:
        return set(_names(self.nodes))


def _names(nodes: tuple[Node, ...]) -> Iterator[str]:
    for node in nodes:
        if isinstance(node, Ref):
            yield node.name
        elif isinstance(node, _If):
            yield node.name
            yield from _names(node.then)
            yield from _names(node.otherwise)


def _line(source: str, offset: int) -> int:
    return source.count("\n", 0, offset) + 1


def _at(source: str, offset: int, problem: str) -> TemplateSyntaxError:
    """The error for ``problem``, named by the line of ``offset``."""
    line = _line(source, offset)
    return TemplateSyntaxError(_("line %(line)s: %(sentence)s", line=line, sentence=problem))


def _without_if(statement: str) -> str:
    return _("%(statement)s without its %(opening)s", statement=statement, opening=_IF_TAG)


def _tokens(source: str) -> Iterator[tuple[str, str, int]]:
    """(kind, text, offset) with kind one of text, ref, stmt."""
    position = 0
    for match in _TAG.finditer(source):
        if match.start() > position:
            yield "text", source[position : match.start()], position
        if match.group("ref") is not None:
            yield "ref", match.group("ref").strip(), match.start()
        elif match.group("stmt") is not None:
            yield "stmt", match.group("stmt").strip(), match.start()
        position = match.end()
    rest = source[position:]
    for opener in ("{{", "{%", "{#"):
        if opener in rest:
            where = position + rest.index(opener)
            raise _at(source, where, _("%(opener)s is never closed", opener=opener))
    if rest:
        yield "text", rest, position


@dataclass
class _Frame:
    name: str
    negate: bool
    then: list[Node]
    otherwise: list[Node] | None
    offset: int


def parse(source: str) -> Template:
    """The template in ``source``; TemplateSyntaxError names the line of the first problem."""
    stack: list[_Frame] = []
    top: list[Node] = []
    for kind, text, offset in _tokens(source):
        current = _target(stack, top)
        if kind == "text":
            current.append(text)
        elif kind == "ref":
            if not _NAME.fullmatch(text):
                problem = _(
                    "only a parameter name may appear in %(tag)s, not %(text)s",
                    tag="{{ }}",
                    text=repr(text),
                )
                raise _at(source, offset, problem)
            current.append(Ref(text))
        else:
            _statement(stack, top, text, source, offset)
    if stack:
        problem = _("this %(opening)s has no %(closing)s", opening=_IF_TAG, closing="{% endif %}")
        raise _at(source, stack[-1].offset, problem)
    return Template(tuple(top))


def _target(stack: list[_Frame], top: list[Node]) -> list[Node]:
    if not stack:
        return top
    frame = stack[-1]
    return frame.then if frame.otherwise is None else frame.otherwise


def _statement(stack: list[_Frame], top: list[Node], text: str, source: str, offset: int) -> None:
    # Line numbers are counted only for an error: counting per token would be quadratic.
    opened = _IF.fullmatch(text)
    if opened:
        if len(stack) >= MAX_DEPTH:
            problem = _("more than %(depth)s nested %(opening)s", depth=MAX_DEPTH, opening=_IF_TAG)
            raise _at(source, offset, problem)
        name, negate = opened.group("name"), bool(opened.group("negate"))
        stack.append(_Frame(name, negate, [], None, offset))
    elif text == "else":
        if not stack or stack[-1].otherwise is not None:
            raise _at(source, offset, _without_if("{% else %}"))
        stack[-1].otherwise = []
    elif text == "endif":
        if not stack:
            raise _at(source, offset, _without_if("{% endif %}"))
        frame = stack.pop()
        node = _If(frame.name, frame.negate, tuple(frame.then), tuple(frame.otherwise or ()))
        _target(stack, top).append(node)
    else:
        problem = _(
            "unknown statement %(statement)s; "
            "only if NAME, if not NAME, else and endif are allowed",
            statement="{% " + text[:40] + " %}",
        )
        raise _at(source, offset, problem)


def evaluate(template: Template, values: Mapping[str, Any]) -> list[str | Ref]:
    """The template's text and references with every conditional decided by ``values``.

    KeyError names a parameter the template uses but ``values`` lacks.
    """
    pieces: list[str | Ref] = []
    _evaluate(template.nodes, values, pieces)
    return pieces


def _evaluate(nodes: tuple[Node, ...], values: Mapping[str, Any], out: list[str | Ref]) -> None:
    for node in nodes:
        if isinstance(node, _If):
            chosen = bool(values[node.name]) != node.negate
            _evaluate(node.then if chosen else node.otherwise, values, out)
        elif isinstance(node, Ref):
            if node.name not in values:
                raise KeyError(node.name)
            out.append(node)
        else:
            out.append(node)
