"""Reading the long form (``-l``) LSF's bjobs, bhist and bqueues print.

Those commands wrap every line at 80 columns and go on after 21 blanks, even inside a path;
a record is a header line of ``Key <value>`` pairs, then events ``Fri Nov 27 20:14:02: …``,
limit tables (``RUNLIMIT`` over ``1.0 min of lsfhead``) and sections. Times carry neither a
year nor a zone: the commands run under TZ=UTC and the year is the one that puts the time
closest before ``now``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from app.scheduler.months import MONTHS

CONTINUATION = "\n" + " " * 21
_RECORD_START = re.compile(r"^(?=Job <)", re.MULTILINE)
# The blank of ", " or " <" may be the one a wrap point swallowed.
_KEY = re.compile(r"(?:^|, ?)([A-Z][A-Za-z/ ]{0,40}?) ?<")
_EVENT = re.compile(
    r"^(?:[A-Z][a-z]{2} )?(?P<month>[A-Z][a-z]{2}) +(?P<day>\d{1,2}) "
    r"(?P<time>\d\d:\d\d:\d\d)(?: (?P<year>\d{4}))?: (?P<text>.*)$"
)
_LIMIT_NAMES = re.compile(r"^ ((?:[A-Z]+LIMIT +)*[A-Z]+LIMIT) *$")


@dataclass(frozen=True, slots=True)
class Event:
    """One timestamped line of a record (its continuation lines joined)."""

    when: datetime | None
    text: str


@dataclass(frozen=True, slots=True)
class LongRecord:
    """One job's record: header fields, events in order, limits, pending reasons."""

    header: dict[str, str]
    events: tuple[Event, ...] = ()
    limits: dict[str, str] = field(default_factory=dict)
    pending_reasons: tuple[str, ...] = ()


def unwrap(text: str) -> str:
    """The text with LSF's line wrapping undone (a blank at a wrap point is lost, as LSF
    drops it)."""
    return text.replace("\r\n", "\n").replace(CONTINUATION, "")


def records(text: str, now: datetime) -> Iterator[LongRecord]:
    """Each ``Job <…>`` record of bjobs -l or bhist -l output."""
    for chunk in chunks(text):
        yield record(chunk, now)


def chunks(text: str) -> Iterator[str]:
    """The text of each ``Job <…>`` record, its wrapping undone: what ``record`` reads."""
    for chunk in _RECORD_START.split(unwrap(text)):
        if chunk.startswith("Job <"):
            yield chunk


def record(chunk: str, now: datetime) -> LongRecord:
    """One record's header fields, events, limits and pending reasons from its text."""
    lines = chunk.split("\n")
    events: list[Event] = []
    limits: dict[str, str] = {}
    reasons: list[str] = []
    index = 1
    while index < len(lines):
        line = lines[index]
        if (event := _EVENT.match(line)) is not None:
            events.append(Event(_when(event, now), event["text"].strip()))
        elif _LIMIT_NAMES.match(line) is not None and index + 1 < len(lines):
            limits.update(limit_table(line, lines[index + 1]))
            index += 1
        elif line.strip() == "PENDING REASONS:":
            while index + 1 < len(lines) and lines[index + 1].strip():
                index += 1
                reasons.append(lines[index].strip().rstrip(";"))
        index += 1
    return LongRecord(header_fields(lines[0]), tuple(events), limits, tuple(reasons))


def header_fields(line: str) -> dict[str, str]:
    """``Job <1>, Job Name <x>, …, Command <…>`` as a dict. A job's name may hold text that
    looks like more fields: the id is the first ``Job`` (the line opens with it), a field
    LSF writes after the name is its last occurrence, and Command, always last, runs from
    the last ``Command <`` and keeps any ``<``, ``>`` or ``, `` of its own."""
    fields: dict[str, str] = {}
    matches = list(_KEY.finditer(line))
    commands = [number for number, match in enumerate(matches) if match[1] == "Command"]
    for number, match in enumerate(matches):
        key = match[1]
        if number == (commands[-1] if commands else None) or number + 1 == len(matches):
            fields[key] = line[match.end() :].rstrip().removesuffix(">")
            break
        if key == "Job" and key in fields:
            continue
        fields[key] = line[match.end() : matches[number + 1].start()].removesuffix(">")
    return fields


def limit_table(names: str, values: str) -> dict[str, str]:
    """A table of limits: each value sits under its name's column."""
    starts = [m.start() for m in re.finditer(r"[A-Z]+LIMIT", names)]
    ends = [*starts[1:], None]
    return {
        names[start:end].strip(): values[start:end].strip()
        for start, end in zip(starts, ends, strict=True)
    }


def bracketed(text: str, key: str) -> str | None:
    """The ``<value>`` after ``key`` in an event's text, or None."""
    match = re.search(re.escape(key) + r" <([^>]*)>", text)
    return match[1] if match else None


def _when(match: re.Match[str], now: datetime) -> datetime | None:
    month = MONTHS.get(match["month"])
    if month is None:
        return None
    hour, minute, second = (int(p) for p in match["time"].split(":"))
    year = int(match["year"]) if match["year"] else now.year
    try:
        when = datetime(year, month, int(match["day"]), hour, minute, second, tzinfo=UTC)
    except ValueError:
        return None
    # Without a year, a time "after" now (beyond clock skew) is last year's.
    if not match["year"] and when > now + timedelta(days=1):
        when = when.replace(year=year - 1)
    return when


def run_limit(text: str | None) -> timedelta | None:
    """``1.0 min of lsfhead`` → one minute."""
    match = re.match(r"([\d.]+) min", text or "")
    return timedelta(minutes=float(match[1])) if match else None


def memory_limit_bytes(text: str | None) -> int | None:
    """``100000 K`` (or ``M``, ``G``) → bytes."""
    match = re.match(r"(\d+) ?([KMGT])", text or "")
    if match is None:
        return None
    return int(match[1]) << (10 * ("KMGT".index(match[2]) + 1))
