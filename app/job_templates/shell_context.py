"""Which bash quoting context each parameter reference of a rendered script sits in.

The scan is deliberately simple: quotes, escapes, comments, command and arithmetic
substitutions, ``${...}``, ``[[ ... ]]`` and here-documents. It never needs to be perfect,
because a value never enters the script as text unless it is made only of characters that
mean nothing to the shell anywhere (see ``shell_quoting``); the context only decides whether
its variable reference is quoted, so a wrong guess can at worst split a value into words.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum

MARKER = "\x00"
_ARITHMETIC_TEST = re.compile(r"\s-(eq|ne|lt|le|gt|ge)\s")
_DELIMITER = re.compile(r"[ \t]*(\S+)")
# Runs of characters that change nothing in a context, skipped in one step: scanning
# character by character would make long templates slow to render.
_INERT_RUN = {
    "unquoted": re.compile(r"[A-Za-z0-9_./:@%+,=-]+"),
    "double": re.compile(r"[^\\\"$`\x00]+"),
    "single": re.compile(r"[^'\x00]+"),
    "comment": re.compile(r"[^\n\x00]+"),
}


class Context(StrEnum):
    UNQUOTED = "unquoted"
    SINGLE = "single"
    ANSI_C = "ansi-c"
    DOUBLE = "double"
    COMMENT = "comment"
    HEREDOC = "heredoc"
    HEREDOC_LITERAL = "heredoc-literal"
    TEST = "test"
    ARITHMETIC = "arithmetic"
    EXPANSION = "expansion"
    ESCAPED = "escaped"
    AFTER_DOLLAR = "after-dollar"


@dataclass
class _Frame:
    context: Context
    closer: str = ""
    depth: int = 0
    delimiter: str = ""
    strip_tabs: bool = False


@dataclass
class _HeredocPending:
    delimiter: str
    literal: bool
    strip_tabs: bool


class _Scanner:
    def __init__(self, text: str) -> None:
        self.text = text
        self.i = 0
        self.stack: list[_Frame] = [_Frame(Context.UNQUOTED)]
        self.pending: list[_HeredocPending] = []
        self.found: list[Context] = []
        self.word_start = True

    @property
    def top(self) -> _Frame:
        return self.stack[-1]

    def at(self, token: str) -> bool:
        return self.text.startswith(token, self.i)

    def run(self) -> list[Context]:
        while self.i < len(self.text):
            self._skip_inert()
            if self.i >= len(self.text):
                break
            char = self.text[self.i]
            if char == MARKER:
                self.found.append(self._marker_context())
                self.i += 1
                self.word_start = False
                continue
            self._step(char)
        return self.found

    def _skip_inert(self) -> None:
        frame = self.top
        pattern = _INERT_RUN.get(frame.context.value)
        if pattern is None or (frame.context == Context.UNQUOTED and frame.closer):
            return
        match = pattern.match(self.text, self.i)
        if match:
            self.i = match.end()
            if frame.context == Context.UNQUOTED:
                self.word_start = False

    def _marker_context(self) -> Context:
        before = self.text[self.i - 1] if self.i else ""
        context = self.top.context
        if before == "\\" and context not in (Context.SINGLE, Context.HEREDOC_LITERAL):
            return Context.ESCAPED
        if before == "$" and context not in (Context.SINGLE, Context.HEREDOC_LITERAL):
            return Context.AFTER_DOLLAR
        if context == Context.UNQUOTED and self.top.closer == "]]":
            return _test_context(self.text, self.i)
        return context

    def _step(self, char: str) -> None:
        context = self.top.context
        if context in (Context.SINGLE, Context.ANSI_C):
            self._quoted(char, context == Context.ANSI_C)
        elif context == Context.COMMENT:
            if char == "\n":
                self.stack.pop()
                self._newline()
                return
            self.i += 1
        elif context in (Context.HEREDOC, Context.HEREDOC_LITERAL):
            self._heredoc(char)
        elif context == Context.DOUBLE:
            self._double(char)
        else:
            self._code(char)

    def _escape(self) -> None:
        # A reference right after a backslash is left for run() to find and refuse.
        self.i += 1 if self.text[self.i + 1 : self.i + 2] == MARKER else 2

    def _quoted(self, char: str, has_escapes: bool) -> None:
        if has_escapes and char == "\\":
            self._escape()
            return
        if char == "'":
            self.stack.pop()
        self.i += 1

    def _double(self, char: str) -> None:
        if char == "\\":
            self._escape()
        elif char == '"':
            self.stack.pop()
            self.i += 1
        elif not self._substitution():
            self.i += 1

    def _heredoc(self, char: str) -> None:
        frame = self.top
        if self.i == 0 or self.text[self.i - 1] == "\n":
            end = self.text.find("\n", self.i)
            line = self.text[self.i : len(self.text) if end < 0 else end]
            if (line.lstrip("\t") if frame.strip_tabs else line) == frame.delimiter:
                self.stack.pop()
                self.i += len(line)
                return
        if frame.context == Context.HEREDOC and char == "\\":
            self._escape()
        elif frame.context == Context.HEREDOC_LITERAL or not self._substitution():
            self.i += 1

    def _substitution(self) -> bool:
        """Enter $(( )), $( ), ${ } or ` ` at the cursor; False when none starts here."""
        for token, frame in (
            ("$((", _Frame(Context.ARITHMETIC, "))")),
            ("$(", _Frame(Context.UNQUOTED, ")")),
            ("${", _Frame(Context.EXPANSION, "}")),
        ):
            if self.at(token):
                self.stack.append(frame)
                self.i += len(token)
                self.word_start = True
                return True
        if self.at("`"):
            if self.top.closer == "`":
                self.stack.pop()
            else:
                self.stack.append(_Frame(Context.UNQUOTED, "`"))
            self.i += 1
            return True
        return False

    def _code(self, char: str) -> None:
        frame = self.top
        if frame.closer and self._closes(frame):
            return
        if char == "\\":
            self._escape()
            self.word_start = False
        elif char in "'\"":
            self.stack.append(_Frame(Context.SINGLE if char == "'" else Context.DOUBLE))
            self.i += 1
            self.word_start = False
        elif self.at("$'"):
            self.stack.append(_Frame(Context.ANSI_C))
            self.i += 2
        elif self._substitution():
            pass
        else:
            self._plain(char)

    def _closes(self, frame: _Frame) -> bool:
        if frame.context in (Context.ARITHMETIC, Context.EXPANSION) or frame.closer == ")":
            opener = {"))": "(", ")": "(", "}": "{"}.get(frame.closer, "")
            if opener and self.at(opener):
                frame.depth += 1
                self.i += 1
                return True
            if frame.depth and self.at(frame.closer[0]):
                frame.depth -= 1
                self.i += 1
                return True
        if self.at(frame.closer):
            self.stack.pop()
            self.i += len(frame.closer)
            self.word_start = False
            return True
        return False

    def _plain(self, char: str) -> None:
        if self.top.context != Context.UNQUOTED:
            self.i += 1
            return
        if self.word_start and char == "#":
            self.stack.append(_Frame(Context.COMMENT))
        elif self.word_start and self.at("(("):
            self.stack.append(_Frame(Context.ARITHMETIC, "))"))
            self.i += 2
            return
        elif self.word_start and self.at("[["):
            self.stack.append(_Frame(Context.UNQUOTED, "]]"))
            self.i += 2
            return
        elif self.at("<<") and not self.at("<<<"):
            self._heredoc_start()
            return
        elif char == "\n":
            self._newline()
            return
        self.word_start = char in " \t;&|()"
        self.i += 1

    def _heredoc_start(self) -> None:
        self.i += 2
        strip_tabs = self.at("-")
        self.i += strip_tabs
        match = _DELIMITER.match(self.text, self.i)
        if match is None:
            return
        word = match.group(1)
        self.i = match.end()
        literal = any(quote in word for quote in "'\"\\")
        delimiter = word.replace("'", "").replace('"', "").replace("\\", "")
        self.pending.append(_HeredocPending(delimiter, literal, strip_tabs))

    def _newline(self) -> None:
        self.i += 1
        self.word_start = True
        for heredoc in reversed(self.pending):
            context = Context.HEREDOC_LITERAL if heredoc.literal else Context.HEREDOC
            self.stack.append(_Frame(context, "", 0, heredoc.delimiter, heredoc.strip_tabs))
        self.pending.clear()


def _test_context(text: str, position: int) -> Context:
    start = text.rfind("[[", 0, position)
    end = text.find("]]", position)
    inside = text[start : len(text) if end < 0 else end]
    return Context.ARITHMETIC if _ARITHMETIC_TEST.search(inside) else Context.TEST


def marker_contexts(text: str) -> list[Context]:
    """The context of each MARKER in ``text``, in order."""
    return _Scanner(text).run()
