"""The scheduler library's sentences for people: English message ids with named parameters.

The library speaks English. Its sentences are logged, stored with a job and returned by the
API as they are, so none is translated where it is made. Each is a message id marked with
``N_`` (which puts it in the interface's catalogue); ``translate`` recognises the id and its
parameters in an English text and gives the text in the reader's language, where it is shown.
Anything that matches no id, Slurm's own words first of all, is shown as it is.
"""

from __future__ import annotations

import re
from collections.abc import Callable

_PLACEHOLDER = re.compile(r"%\((?P<name>[a-z_]+)\)s|%%")
# What each parameter may hold, as narrowly as its sentences fill it in: ``sentence`` is a
# sentence of its own (translated in turn) and ``said`` Slurm's words (kept); any other
# parameter stops at "; ", which separates the sentences of a list.
_NUMBER = r"\d+"
_QUOTED = r"(?:'.*?'|\".*?\")"
_VALUES = {
    "sentence": r".+?",
    "said": r".+?",
    "line": _NUMBER,
    "upper": _NUMBER,
    "count": _NUMBER,
    "nodes": _NUMBER,
    "tasks": _NUMBER,
    "option": r"-[^\s;]*",
    "suggestion": r"--[\w-]+",
    "choices": r"--[\w -]+",
    "quote": r"[\"']",
    "value": _QUOTED,
    "word": _QUOTED,
    "throttle": r"%\d*",
    "part": r"[\d:-]+",
    "range": r"\d+-\d+",
    "pattern": r"%\S",
    "prefix": r"#SBATCH",
    "example": r"#!\S+",
}
_OTHER = r"(?:(?!; ).)+?"
_OR = "%(first)s or %(second)s"
_known: dict[str, re.Pattern[str]] = {}
_ordered: list[tuple[str, re.Pattern[str]]] = []


def _pattern(message_id: str) -> re.Pattern[str]:
    if _PLACEHOLDER.search(message_id.replace("%%", "")) is None:
        # Without parameters a message is not %-formatted: "%%" stays as written.
        return re.compile(re.escape(message_id), re.DOTALL)
    parts: list[str] = []
    seen: set[str] = set()
    position = 0
    for match in _PLACEHOLDER.finditer(message_id):
        parts.append(re.escape(message_id[position : match.start()]))
        name = match["name"]
        if name is None:
            parts.append("%")
        elif name in seen:
            parts.append(f"(?P={name})")
        else:
            seen.add(name)
            parts.append(f"(?P<{name}>{_VALUES.get(name, _OTHER)})")
        position = match.end()
    parts.append(re.escape(message_id[position:]))
    return re.compile("".join(parts), re.DOTALL)


def N_(message_id: str) -> str:
    """Mark ``message_id`` for the catalogue and remember it for ``translate``."""
    if message_id not in _known:
        _known[message_id] = _pattern(message_id)
        _ordered.clear()
    return message_id


def message_ids() -> tuple[str, ...]:
    """Every message id marked with ``N_`` so far (all of the library's once it is imported)."""
    return tuple(_known)


def _candidates() -> list[tuple[str, re.Pattern[str]]]:
    if not _ordered:
        # The most specific first: "no option X (did you mean Y?)" before "no option X".
        literal = {key: len(_PLACEHOLDER.sub("", key)) for key in _known}
        _ordered.extend(sorted(_known.items(), key=lambda item: -literal[item[0]]))
    return _ordered


def _alternatives(choices: list[str], gettext: Callable[..., str]) -> str:
    shown = choices[0]
    for choice in choices[1:]:
        shown = gettext(_OR, first=shown, second=choice)
    return shown


def translate(text: str, gettext: Callable[..., str]) -> str:
    """``text`` in the language ``gettext`` speaks when it is one of the known sentences (or
    a "; "-separated list of them, each translated on its own); otherwise ``text`` itself."""
    for message_id, pattern in _candidates():
        match = pattern.fullmatch(text)
        if match is None:
            continue
        params = match.groupdict()
        if "sentence" in params:
            params["sentence"] = translate(params["sentence"], gettext)
        if "choices" in params:
            params["choices"] = _alternatives(params["choices"].split(" or "), gettext)
        return gettext(message_id, **params) if params else gettext(message_id)
    if "; " in text:
        # The list's separator too: French puts a narrow no-break space before ";".
        parts = re.split("[\u00a0\u202f]?; ", text)
        return gettext("; ").join(translate(part, gettext) for part in parts)
    return text


# Sentences of the script reader (directives, sbatch_options, directive_values), the spec
# checks (validation, log_paths) and the script request (app.jobs.scripts), which reach the
# submit pages as they were raised.
READER = (
    N_("a %(quote)s quote is never closed"),
    N_("%(option)s takes no value"),
    N_("%(option)s needs a value"),
    N_("sbatch has no option %(option)s"),
    N_("sbatch has no option %(option)s (did you mean %(suggestion)s?)"),
    N_("%(word)s is not an option (options start with - or --)"),
    N_("%(option)s is ambiguous: %(choices)s"),
    N_(_OR),
    N_("sbatch ignores %(prefix)s lines after the first command; move it above that command"),
    N_("Invalid %(option)s specification %(value)s (e.g. 30, 2:00:00, 1-12:00)"),
    N_("Invalid %(option)s specification %(value)s (e.g. 2 or 1-4)"),
    N_("Invalid memory specification %(value)s (e.g. 4G, 32000M)"),
    N_("Invalid GPU count %(value)s (e.g. 2 or a100:2)"),
    N_("%(option)s expects a whole number, not %(value)s"),
    N_("use task numbers like 1-10, 1,3,5 or 1-100%4"),
    N_("%(throttle)s would let no task run; write %%1 or more, or leave it out for no limit"),
    N_("%(part)s counts down; write the smaller number first (%(range)s)"),
    N_("%(part)s has a step of 0; use :1 or more"),
    N_("line %(line)s: %(sentence)s"),
    N_("sbatch would refuse this script: %(sentence)s"),
    N_("The cluster would refuse this job: %(sentence)s"),
)
SPEC_CHECKS = (
    N_("must not contain NUL characters"),
    N_("must be a single line"),
    N_("must be a whole number between 1 and %(upper)s"),
    N_("is too long"),
    N_("must be an absolute path"),
    N_("must not contain '..'"),
    N_("is outside the allowed directories"),
    N_("contains characters that are not allowed in paths"),
    N_("unknown filename pattern %(pattern)s"),
    N_("is larger than 1 MiB"),
    N_("must start with an interpreter line such as %(example)s"),
    N_("invalid variable name %(name)s"),
    N_("value of %(name)s contains a NUL character"),
    N_("value of %(name)s is too long"),
    N_("at most %(count)s arguments"),
    N_("an argument contains a NUL character"),
    N_("an argument is longer than %(count)s bytes"),
    N_(
        "%(nodes)s nodes for %(tasks)s task leaves a node with nothing to run; "
        "ask for more tasks or fewer nodes"
    ),
    N_(
        "%(nodes)s nodes for %(tasks)s tasks leaves a node with nothing to run; "
        "ask for more tasks or fewer nodes"
    ),
    N_("set either memory per node or memory per CPU, not both"),
    N_("invalid resource name"),
    N_("invalid resource type"),
    N_("use letters, digits, spaces and ._+- only"),
    N_("use letters, digits and ._- only"),
    N_("expected e.g. afterok:123"),
    N_("contains characters that are not allowed"),
    N_("expected now+N or an ISO date/time"),
    N_("%(sentence)s once Slurm fills in the job name and user (%%x, %%u)"),
)
