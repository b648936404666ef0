"""How a parameter's value reaches a job script without ever becoming shell syntax.

A value made only of characters that are inert in every shell context (letters, digits and
``_./:@%+,-``) is written into the script as it is. Any other value travels in the job's
environment, as ``PORTAL_PARAM_<name>``, and the script refers to the variable with the
quoting its context needs: ``"${V}"`` in code, ``${V}`` inside double quotes and unquoted
here-documents, ``'"${V}"'`` inside single quotes. The shell never parses an expansion's
result as code, so no value can add a command, a quote or an ``#SBATCH`` line, whatever the
template author wrote around it. Where bash would evaluate the expansion again (arithmetic,
``${...}`` operators, ``[[ -eq ]]``) only a number is accepted, and where nothing is
expanded (quoted here-documents) only an inert value is.

A ``words`` value (arguments, a list of modules) is several words: as a command's arguments
each word is placed on its own, so ``cuda pytorch`` loads two modules and an empty value adds
no argument at all; anywhere else its words stand as one string.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from app.i18n import _
from app.job_templates.script_language import Ref
from app.job_templates.shell_context import MARKER, Context, marker_contexts

ENV_PREFIX = "PORTAL_PARAM_"
_INERT = re.compile(r"[A-Za-z0-9_./:@%+,-]{1,256}")
_NUMBER = re.compile(r"-?\d{1,30}(\.\d{1,30})?")
_WORD_START = frozenset(" \t\n;&|(`")
_WORD_END = frozenset(" \t\n;&|)`")


class UnsafePlacement(ValueError):
    """A reference sits where no value of its kind can be placed safely."""


class ScriptTooLarge(ValueError):
    """The script grew past the size limit; the rest was not rendered."""


@dataclass(frozen=True, slots=True)
class Words:
    """The words of a ``words`` parameter, split as a shell splits what the user typed."""

    items: tuple[str, ...]

    def __str__(self) -> str:
        return " ".join(self.items)

    def __bool__(self) -> bool:
        return bool(self.items)


@dataclass(frozen=True, slots=True)
class QuotedScript:
    script: str
    environment: dict[str, str]


def value_text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        return str(int(value))
    return str(value)


def variable_name(parameter: str) -> str:
    return ENV_PREFIX + parameter


def quote_pieces(
    pieces: Sequence[str | Ref], values: Mapping[str, Any], limit: int | None = None
) -> QuotedScript:
    """The script for ``pieces`` with each reference placed for its context.

    Raises UnsafePlacement naming the parameter and the context when a reference cannot
    be placed, ScriptTooLarge as soon as the script would exceed ``limit`` characters.
    """
    refs = [piece for piece in pieces if isinstance(piece, Ref)]
    skeleton = "".join(MARKER if isinstance(piece, Ref) else piece for piece in pieces)
    contexts = marker_contexts(skeleton)
    environment: dict[str, str] = {}
    parts = skeleton.split(MARKER)
    out = [parts[0]]
    size = len(parts[0])
    for index, (ref, context, tail) in enumerate(zip(refs, contexts, parts[1:], strict=True)):
        value = values[ref.name]
        if isinstance(value, Words):
            # A reference right before or after glues to this one like any other text.
            before = out[-1] if out[-1] or index == 0 else "x"
            after = tail if tail or index == len(refs) - 1 else "x"
            alone = _stands_alone(before, after)
            out.append(_placed_words(ref.name, value, context, alone, environment))
        else:
            out.append(_placed(ref.name, value_text(value), context, environment))
        out.append(tail)
        size += len(out[-2]) + len(tail)
        if limit is not None and size > limit:
            raise ScriptTooLarge(_("the script is larger than %(limit)s characters", limit=limit))
    return QuotedScript("".join(out), environment)


def _reference(name: str) -> str:
    return "{{ " + name + " }}"


def _placed(name: str, text: str, context: Context, environment: dict[str, str]) -> str:
    if context in (Context.ARITHMETIC, Context.EXPANSION):
        if _NUMBER.fullmatch(text):
            return text
        raise UnsafePlacement(
            _(
                "%(reference)s is used where bash evaluates it as arithmetic or an expansion; "
                "only numbers may go there",
                reference=_reference(name),
            )
        )
    if context in (Context.ESCAPED, Context.AFTER_DOLLAR):
        raise UnsafePlacement(
            _("%(reference)s must not follow a backslash or a $", reference=_reference(name))
        )
    # Inside [[ ]] a bare word such as -f is an operator, so only a quoted value is data.
    is_operator = context == Context.TEST and text.startswith("-")
    if _INERT.fullmatch(text) and context != Context.COMMENT and not is_operator:
        return text
    if context == Context.HEREDOC_LITERAL:
        raise UnsafePlacement(
            _(
                "%(reference)s is inside a quoted here-document, which expands nothing; "
                "use an unquoted delimiter (%(delimiter)s) so its value can be expanded",
                reference=_reference(name),
                delimiter="<<EOF",
            )
        )
    environment[variable_name(name)] = text
    reference = "${" + variable_name(name) + "}"
    return {
        Context.UNQUOTED: f'"{reference}"',
        Context.TEST: f'"{reference}"',
        Context.SINGLE: f"'\"{reference}\"'",
        Context.ANSI_C: f"'\"{reference}\"$'",
    }.get(context, reference)


def _stands_alone(before: str, after: str) -> bool:
    """Whether a reference is a whole word of its own, not glued to text such as ``X=``."""
    return (not before or before[-1] in _WORD_START) and (not after or after[0] in _WORD_END)


def _placed_words(
    name: str, words: Words, context: Context, alone: bool, environment: dict[str, str]
) -> str:
    if context == Context.TEST:
        raise UnsafePlacement(
            _(
                "%(reference)s is a list of words, which would be several operands inside "
                "%(test)s; quote it there or use it as a command's arguments",
                reference=_reference(name),
                test="[[ ]]",
            )
        )
    if context != Context.UNQUOTED or not alone:
        # Split after X= or --opt=, the second word would become a command or an argument
        # of its own; glued to other text the words stay one string.
        return _placed(name, str(words), context, environment)
    # An upper-case suffix cannot collide with another parameter: names are lower case.
    return " ".join(
        _placed(f"{name}_W{index}", word, context, environment)
        for index, word in enumerate(words.items, start=1)
    )
