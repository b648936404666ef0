"""Pure parsers for the outputs of disk usage commands, and the format selector.

Three formats are read:

- ``quota`` (Linux quota-tools: ``quota -v -w``, ``-s`` for human sizes, ``-p`` for raw
  grace times) and ``lfs quota`` (Lustre, ``-h`` for human sizes), which share one table:
  a ``Disk quotas for user alice (uid 1000):`` heading, a column header, then per
  filesystem used, soft, hard and grace for space then files. Bare space figures are KiB.
  A used figure over a limit carries ``*``; a long filesystem name may sit on a line of its
  own with the figures on the next.
- ``diskusage_report`` (as on Alliance clusters): a ``Description  Space  # of files`` table
  whose rows read ``/home (user alice)   2.1GiB/50GiB   12k/500k``.

``auto`` recognises the format from the output itself. A limit of 0 means no limit.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime

from app.scheduler.disk_usage import (
    DiskUsageFormat,
    FilesystemUsage,
    QuotaFigures,
    count_of,
    size_in_bytes,
)
from app.scheduler.errors import DiskUsageUnavailable

_HEADING = re.compile(
    r"^\s*Disk quotas for (?P<kind>\w+) (?P<name>\S+) \(\w+ \d+\):.*$", re.MULTILINE
)
_KINDS = {"usr": "user", "user": "user", "grp": "group", "group": "group", "prj": "project"}
_LFS_COLUMNS = re.compile(r"^\s*Filesystem\s+(?:kbytes|used)\b", re.MULTILINE)
# lfs quota -v adds one line per metadata or object storage target; they are not filesystems.
_LUSTRE_TARGET = re.compile(r"-(?:MDT|OST)[0-9a-fA-F]{4}(?:_UUID)?$")
_COUNT_TOKEN = re.compile(r"\[?\d+(?:\.\d+)?[kmgtKMGT]?\]?\*?")
_NO_GRACE = {"", "-", "0", "[-]"}
_FIGURE = r"\d+(?:\.\d+)?\s?[A-Za-z]{0,3}"
_REPORT_ROW = re.compile(
    rf"^\s*(?P<name>\S.*?)\s+(?P<space_used>{_FIGURE})\s*/\s*(?P<space_limit>{_FIGURE})"
    rf"\s+(?P<files_used>{_FIGURE})\s*/\s*(?P<files_limit>{_FIGURE})\s*$"
)
_REPORT_HEADER = re.compile(r"Description\s+Space\s+#\s*of\s+files", re.IGNORECASE)
_SHOWN_CHARACTERS = 120


def parse_disk_usage(text: str, fmt: DiskUsageFormat = "auto") -> list[FilesystemUsage]:
    """The filesystems in ``text`` read as ``fmt``; an empty list when no quota applies.

    Raises DiskUsageUnavailable, saying what was wrong, for empty or unreadable output.
    """
    if not text.strip():
        raise DiskUsageUnavailable("the command printed nothing")
    chosen = detect_format(text) if fmt == "auto" else fmt
    if chosen is None:
        raise DiskUsageUnavailable(
            "the command's output is in no format the portal reads (quota, lfs quota, "
            f"diskusage_report): {_first_line(text)}"
        )
    if chosen == "diskusage_report":
        return parse_diskusage_report(text)
    return parse_quota_table(text, "lfs quota" if chosen == "lfs" else "quota")


def read_disk_usage(
    stdout: str, stderr: str, exit_status: int, fmt: DiskUsageFormat = "auto"
) -> list[FilesystemUsage]:
    """What a disk usage command said, or DiskUsageUnavailable in its own words.

    The output decides, not the exit status: ``quota`` exits 1 whenever the user is over a
    quota. Only output that cannot be read turns the command's stderr into the error.
    """
    try:
        return parse_disk_usage(stdout, fmt)
    except DiskUsageUnavailable:
        said = _last_lines(stderr)
        if said:
            raise DiskUsageUnavailable(said) from None
        if exit_status != 0 and not stdout.strip():
            raise DiskUsageUnavailable(f"the command exited with status {exit_status}") from None
        raise


def detect_format(text: str) -> DiskUsageFormat | None:
    """Which of the known formats ``text`` is in, or None."""
    if _HEADING.search(text):
        return "lfs" if _LFS_COLUMNS.search(text) else "quota"
    if _REPORT_HEADER.search(text) or any(_REPORT_ROW.match(line) for line in text.splitlines()):
        return "diskusage_report"
    return None


@dataclass(frozen=True, slots=True)
class _Row:
    name: str
    figures: list[str]
    raw: str
    quota_of: str


def parse_quota_table(text: str, tool: str = "quota") -> list[FilesystemUsage]:
    """Rows of ``quota`` or ``lfs quota`` output (``tool`` names it in errors)."""
    headings = list(_HEADING.finditer(text))
    if not headings:
        raise DiskUsageUnavailable(
            f"the command's output is not {tool} output: {_first_line(text)}"
        )
    # Whose quota each row is goes into its label only when the output covers several.
    several = len({_quota_of(h) for h in headings}) > 1
    found = []
    for row in _rows(text.splitlines()):
        if _LUSTRE_TARGET.search(row.name):
            continue
        parsed = _quota_figures(row.figures)
        if parsed is None:
            raise DiskUsageUnavailable(f"a line of {tool} output cannot be read: {row.raw}")
        space, files = parsed
        found.append(
            FilesystemUsage(row.name, space, files, row.raw, row.quota_of if several else "")
        )
    return found


def _quota_of(heading: re.Match[str]) -> str:
    return f"{_KINDS.get(heading['kind'], heading['kind'])} {heading['name']}"


def _rows(lines: list[str]) -> Iterator[_Row]:
    """Each filesystem's name, figure tokens and raw text, long names' wrapping undone."""
    quota_of, pending, pending_raw = "", "", ""
    for line in lines:
        heading = _HEADING.match(line)
        tokens = line.split()
        if heading is not None:
            quota_of, pending = _quota_of(heading), ""
            continue
        if not tokens or tokens[0] == "Filesystem":
            continue
        start = _figures_start(tokens)
        if start is None and _looks_like_row(tokens):
            # Figures that cannot be read: yielded so that the caller names the line.
            start = 0 if tokens[0][0].isdigit() else 1
        if start is None:
            # A long name alone on its line; the figures follow on the next one.
            pending, pending_raw = " ".join(tokens), line
            continue
        name = " ".join(tokens[:start]) or pending
        raw = line if start else f"{pending_raw}\n{line}"
        pending = ""
        if name:
            yield _Row(name, tokens[start:], raw.rstrip(), quota_of)


def _looks_like_row(tokens: list[str]) -> bool:
    """A name and 6 to 8 figures, or the figures alone, the first of them a number."""
    if 6 <= len(tokens) <= 8 and tokens[0][0].isdigit():
        return True
    return 7 <= len(tokens) <= 9 and tokens[1].lstrip("[")[:1].isdigit()


def _figures_start(tokens: list[str]) -> int | None:
    """Where the figures begin in a row's tokens (after the filesystem's name)."""
    for start in range(len(tokens)):
        if 6 <= len(tokens) - start <= 8 and _quota_figures(tokens[start:]) is not None:
            return start
    return None


def _quota_figures(tokens: list[str]) -> tuple[QuotaFigures, QuotaFigures] | None:
    """Space and files from 6 to 8 tokens: a grace is printed only where it applies
    (``quota``), always (``lfs quota``, ``quota -p``)."""
    if len(tokens) == 8:
        space, files = tokens[:4], tokens[4:]
    elif len(tokens) == 6:
        space, files = [*tokens[:3], ""], [*tokens[3:], ""]
    elif len(tokens) == 7 and _COUNT_TOKEN.fullmatch(tokens[3]):
        space, files = [*tokens[:3], ""], tokens[3:]
    elif len(tokens) == 7:
        space, files = tokens[:4], [*tokens[4:], ""]
    else:
        return None
    try:
        return _figures(space, _kibibytes), _figures(files, count_of)
    except ValueError:
        return None


def _kibibytes(text: str) -> int:
    return size_in_bytes(text, bare_unit=1024)


def _figures(tokens: list[str], amount: Callable[[str], int]) -> QuotaFigures:
    used, soft, hard, grace = tokens
    is_marked = used.endswith("*")
    return QuotaFigures(
        used=amount(_bare(used)),
        soft=_limit(soft, amount),
        hard=_limit(hard, amount),
        grace=_grace(grace),
        is_marked_over=is_marked,
    )


def _bare(token: str) -> str:
    """A figure without lfs's brackets (an inaccurate value) or the over-quota mark; lfs
    prints "-" where a storage target does not account for the resource."""
    bare = token.rstrip("*").strip("[]")
    return "0" if bare == "-" else bare


def _limit(token: str, amount: Callable[[str], int]) -> int | None:
    return amount(_bare(token)) or None


def _grace(text: str) -> str | None:
    if text in _NO_GRACE:
        return None
    if text == "none":
        # quota and lfs quota say "none" once the grace period has run out.
        return "expired"
    if text.isdigit():
        # quota -p prints when the grace period ends, in seconds since the epoch.
        ends = datetime.fromtimestamp(int(text), UTC)
        return f"until {ends:%Y-%m-%d %H:%M} UTC"
    return text


def parse_diskusage_report(text: str) -> list[FilesystemUsage]:
    """Rows of a ``diskusage_report``-style table; other lines (its per-user breakdown,
    hints) are left out."""
    found = []
    has_header = bool(_REPORT_HEADER.search(text))
    for line in text.splitlines():
        row = _REPORT_ROW.match(line)
        if row is None:
            continue
        try:
            space = _report_figures(row["space_used"], row["space_limit"], size_in_bytes)
            files = _report_figures(row["files_used"], row["files_limit"], count_of)
        except ValueError:
            raise DiskUsageUnavailable(
                f"a line of the command's output cannot be read: {line}"
            ) from None
        found.append(FilesystemUsage(row["name"], space, files, line.rstrip()))
    if not found and not has_header:
        raise DiskUsageUnavailable(
            f"the command's output is not a disk usage table: {_first_line(text)}"
        )
    return found


def _report_figures(used: str, limit: str, amount: Callable[[str], int]) -> QuotaFigures:
    return QuotaFigures(used=amount(used), hard=amount(limit) or None)


def _first_line(text: str) -> str:
    line = next((" ".join(line.split()) for line in text.splitlines() if line.strip()), "")
    return line if len(line) <= _SHOWN_CHARACTERS else line[:_SHOWN_CHARACTERS] + "…"


def _last_lines(text: str, count: int = 3) -> str:
    """The end of a command's stderr, where the reason usually is, in one line."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    said = " ".join(lines[-count:])
    return said if len(said) <= 2 * _SHOWN_CHARACTERS else "…" + said[-2 * _SHOWN_CHARACTERS :]
