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
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from app.job_templates.script_language import Ref
from app.job_templates.shell_context import MARKER, Context, marker_contexts

ENV_PREFIX = "PORTAL_PARAM_"
_INERT = re.compile(r"[A-Za-z0-9_./:@%+,-]{1,256}")
_NUMBER = re.compile(r"-?\d{1,30}(\.\d{1,30})?")


class UnsafePlacement(ValueError):
    """A reference sits where no value of its kind can be placed safely."""


class ScriptTooLarge(ValueError):
    """The script grew past the size limit; the rest was not rendered."""


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
    for ref, context, tail in zip(refs, contexts, parts[1:], strict=True):
        text = value_text(values[ref.name])
        out.append(_placed(ref.name, text, context, environment))
        out.append(tail)
        size += len(out[-2]) + len(tail)
        if limit is not None and size > limit:
            raise ScriptTooLarge(f"the script is larger than {limit} characters")
    return QuotedScript("".join(out), environment)


def _placed(name: str, text: str, context: Context, environment: dict[str, str]) -> str:
    if context in (Context.ARITHMETIC, Context.EXPANSION):
        if _NUMBER.fullmatch(text):
            return text
        raise UnsafePlacement(
            f"{{{{ {name} }}}} is used where bash evaluates it as arithmetic or an expansion; "
            "only numbers may go there"
        )
    if context in (Context.ESCAPED, Context.AFTER_DOLLAR):
        raise UnsafePlacement(f"{{{{ {name} }}}} must not follow a backslash or a $")
    # Inside [[ ]] a bare word such as -f is an operator, so only a quoted value is data.
    is_operator = context == Context.TEST and text.startswith("-")
    if _INERT.fullmatch(text) and context != Context.COMMENT and not is_operator:
        return text
    if context == Context.HEREDOC_LITERAL:
        raise UnsafePlacement(
            f"{{{{ {name} }}}} is inside a quoted here-document, which expands nothing; "
            "use an unquoted delimiter (<<EOF) so its value can be expanded"
        )
    environment[variable_name(name)] = text
    reference = "${" + variable_name(name) + "}"
    return {
        Context.UNQUOTED: f'"{reference}"',
        Context.TEST: f'"{reference}"',
        Context.SINGLE: f"'\"{reference}\"'",
        Context.ANSI_C: f"'\"{reference}\"$'",
    }.get(context, reference)
