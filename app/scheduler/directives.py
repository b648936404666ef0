"""Reading a batch script's ``#SBATCH`` lines the way sbatch reads them.

sbatch takes options from ``#SBATCH`` lines at the very start of a line, only up to the first
line that is neither blank nor a comment; later ones are ignored. Words are split on blanks,
quotes group, and a word starting with ``#`` starts a comment. Options on sbatch's command
line win over the script's, and a later directive wins over an earlier one. This module does
the same, names every option it does not know with the closest valid one, and says which
directives sbatch would ignore. It changes nothing in the script: the script is sent as is.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field

from app.scheduler.sbatch_options import OPTIONS, SHORT, unknown_option_message

PREFIX = "#SBATCH"


@dataclass(frozen=True, slots=True)
class Directive:
    """One option from a ``#SBATCH`` line (or an override), by its long name."""

    option: str
    value: str | None
    line: int = 0
    """1-based line number in the script; 0 for an override from outside the script."""


@dataclass(frozen=True, slots=True)
class DirectiveProblem:
    """Something on a ``#SBATCH`` line that sbatch would refuse or ignore."""

    line: int
    text: str
    message: str


@dataclass(frozen=True, slots=True)
class ScriptDirectives:
    """What sbatch would read from a script, and what it would refuse or ignore."""

    directives: tuple[Directive, ...] = ()
    errors: tuple[DirectiveProblem, ...] = ()
    ignored: tuple[DirectiveProblem, ...] = ()
    values: Mapping[str, str | None] = field(default_factory=dict)
    """Effective value per long option name (the last one given wins)."""

    def get(self, option: str) -> str | None:
        """The effective value of ``option`` (``None`` when absent or given without one)."""
        return self.values.get(option)

    def has(self, option: str) -> bool:
        """Whether ``option`` was given at all (flags such as ``--hold`` have no value)."""
        return option in self.values


def read_directives(script: str, overrides: Sequence[Directive] = ()) -> ScriptDirectives:
    """Read ``script``'s directives; ``overrides`` (as on sbatch's command line) win."""
    directives: list[Directive] = []
    errors: list[DirectiveProblem] = []
    ignored: list[DirectiveProblem] = []
    in_header = True
    for number, line in enumerate(script.splitlines(), start=1):
        stripped = line.strip()
        if in_header and stripped and not stripped.startswith("#"):
            in_header = False
        if not _is_directive(line):
            continue
        if not in_header:
            ignored.append(DirectiveProblem(number, line, _IGNORED))
            continue
        found, problems = _parse_line(line[len(PREFIX) :], number, line)
        directives += found
        errors += problems
    values: dict[str, str | None] = {}
    for directive in [*directives, *overrides]:
        values[directive.option] = directive.value
    return ScriptDirectives(tuple(directives), tuple(errors), tuple(ignored), values)


_IGNORED = "sbatch ignores #SBATCH lines after the first command; move it above that command"


def _is_directive(line: str) -> bool:
    return line.startswith(PREFIX) and (len(line) == len(PREFIX) or line[len(PREFIX)].isspace())


def _parse_line(
    rest: str, number: int, text: str
) -> tuple[list[Directive], list[DirectiveProblem]]:
    try:
        words = list(split_words(rest))
    except ValueError as error:
        return [], [DirectiveProblem(number, text, str(error))]
    found: list[Directive] = []
    problems: list[DirectiveProblem] = []
    index = 0
    while index < len(words):
        try:
            directive, index = _take_option(words, index, number)
        except ValueError as error:
            problems.append(DirectiveProblem(number, text, str(error)))
            break
        found.append(directive)
    return found, problems


def split_words(text: str) -> Iterator[str]:
    """Split like sbatch does: blanks separate, quotes group, ``#`` starting a word ends it."""
    word: list[str] = []
    quote = ""
    started = False
    for char in text:
        if quote:
            if char == quote:
                quote = ""
            else:
                word.append(char)
        elif char in "\"'":
            quote, started = char, True
        elif char.isspace():
            if started:
                yield "".join(word)
            word, started = [], False
        elif char == "#" and not started:
            return
        else:
            word.append(char)
            started = True
    if quote:
        raise ValueError(f"a {quote} quote is never closed")
    if started:
        yield "".join(word)


def _take_option(words: Sequence[str], index: int, line: int) -> tuple[Directive, int]:
    long_name, value = _split_option(words[index])
    arity = OPTIONS[long_name][1]
    if value is not None and arity == "none":
        raise ValueError(f"--{long_name} takes no value")
    if value is None and arity == "required":
        if index + 1 >= len(words):
            raise ValueError(f"--{long_name} needs a value")
        return Directive(long_name, words[index + 1], line), index + 2
    return Directive(long_name, value, line), index + 1


def _split_option(word: str) -> tuple[str, str | None]:
    """(long option name, value written in the same word or None)."""
    if word.startswith("--"):
        name, equals, value = word[2:].partition("=")
        return _known(name, word), (value if equals else None)
    if word.startswith("-") and len(word) > 1:
        long_name = SHORT.get(word[1])
        if long_name is None:
            raise ValueError(f"sbatch has no option -{word[1]}")
        glued = word[2:].removeprefix("=")
        return long_name, (glued if word[2:] else None)
    raise ValueError(f"{word!r} is not an option (options start with - or --)")


def _known(name: str, word: str) -> str:
    if name in OPTIONS:
        return name
    # sbatch, like getopt, accepts any unambiguous prefix of a long option.
    matches = [option for option in OPTIONS if option.startswith(name)] if name else []
    if len(matches) == 1:
        return matches[0]
    if matches:
        shown = " or ".join(f"--{m}" for m in sorted(matches))
        raise ValueError(f"--{name} is ambiguous: {shown}")
    raise ValueError(unknown_option_message(word.partition("=")[0]))
