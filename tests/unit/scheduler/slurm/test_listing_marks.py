"""squeue and sacct listings whose free text holds separators, line feeds or forged records.

Any user can name a job ``a<US>b``, work in a folder whose name holds a line feed, or put
a whole squeue line of their making in a comment. The queue is still read whole; each
job's record is its own, with its free text as typed; no forged record appears; and a
listing cut short loses only its unfinished record. Built on the recorded listings of
every version.
"""

from __future__ import annotations

import logging

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.scheduler.slurm import parsing, squeue
from app.scheduler.slurm.commands import SACCT_FIELDS, SEP, SQUEUE_FIELDS, squeue_format
from app.scheduler.slurm.marks import Marks

KEYS = [key for key, _ in SQUEUE_FIELDS]
FREE = ["name", "work_dir", "stdout", "stderr", "comment"]
FIXED = ["job_id", "state", "user", "account", "partition", "submit_time", "time_limit", "alloc"]
GUESSED = Marks("guessedmark0")
TEXT = st.lists(
    st.sampled_from(["a", "Z", "7", " ", "/", ":", "%j", "\n", SEP, "\x1e", "é"])
    | st.sampled_from(["mark", GUESSED.field, GUESSED.end, "\n123\x1f"]),
    max_size=12,
).map("".join)


def _cells(recorded) -> list[list[str]]:
    """The recorded active queue's records as lists of raw fields."""
    marks = recorded.marks
    return [
        line.removesuffix(marks.end).replace(marks.field, SEP).split(SEP)
        for line in recorded.text("squeue-active.txt").split("\n")
        if line.strip()
    ]


def _listing(rows: list[list[str]], marks: Marks) -> str:
    """What squeue prints for ``rows`` with squeue_format of ``marks``."""
    suffixes = [spec.split(":0", 1)[1] for spec in squeue_format(marks.field, marks.end).split(",")]
    return "".join(
        "".join(c + s for c, s in zip(row, suffixes, strict=True)) + "\n" for row in rows
    )


def _with(row: list[str], **values: str) -> list[str]:
    changed = list(row)
    for key, value in values.items():
        changed[KEYS.index(key)] = value
    return changed


def _fixed(info) -> list[object]:
    return [getattr(info, name) for name in FIXED]


def _as_read(value: str) -> str:
    """Free text as a listing gives it back: as typed, but for blanks at either end."""
    return value.strip()


def test_separators_and_line_feeds_in_free_text_keep_each_record_whole(recorded) -> None:
    rows = _cells(recorded)
    name = f"a{SEP}b\nc\x1ed{SEP}"
    hostile = _with(rows[1], name=name, work_dir=f"/tmp/x\n{SEP}y", comment=f"{SEP}\n\n{SEP}z")
    text = _listing([rows[0], hostile, *rows[2:]], recorded.marks)
    plain = squeue.parse_squeue(_listing(rows, recorded.marks), recorded.marks)
    read = squeue.parse_squeue(text, recorded.marks)
    assert [_fixed(info) for info in read] == [_fixed(info) for info in plain]
    assert (read[1].name, read[1].work_dir, read[1].comment) == (
        f"a{SEP}b\nc\x1ed",
        f"/tmp/x\n{SEP}y",
        "z",
    )
    assert read[0] == plain[0] and read[2:] == plain[2:]
    assert squeue.SqueueReader(recorded.marks).parse(text) == read


def test_a_record_forged_in_a_comment_never_becomes_a_job(recorded) -> None:
    rows = _cells(recorded)
    victim = rows[2]
    # Another user's job id and state, printed as squeue would: with plain separators and
    # with marks the user guessed.
    forged = _with(victim, state="COMPLETED", user="mallory")
    plain_line = SEP.join(forged) + "\x1e"
    comment = "\n" + plain_line + "\n" + _listing([forged], GUESSED)
    hostile = _with(rows[1], comment=comment)
    text = _listing([rows[0], hostile, *rows[2:]], recorded.marks)
    read = squeue.parse_squeue(text, recorded.marks)
    assert len(read) == len(rows)
    assert [info.job_id for info in read] == [row[0] for row in rows]
    assert read[2] == squeue.parse_squeue(_listing([victim], recorded.marks), recorded.marks)[0]
    assert read[1].user == rows[1][KEYS.index("user")]


def test_a_listing_cut_short_loses_only_its_unfinished_record(recorded, caplog) -> None:
    rows = _cells(recorded)
    text = _listing(rows, recorded.marks)
    cut = text[: text.rindex(recorded.marks.end) - 5]
    reader = squeue.SqueueReader(recorded.marks)
    with caplog.at_level(logging.WARNING, logger="app.scheduler.slurm.squeue"):
        read = reader.parse(cut)
    assert [info.job_id for info in read] == [row[0] for row in rows[:-1]]
    assert "squeue: 1 record(s) left out" in caplog.text


@settings(max_examples=200, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(values=st.fixed_dictionaries({key: TEXT for key in FREE}))
def test_free_text_is_read_as_typed_and_changes_no_fixed_field(recorded, values) -> None:
    rows = _cells(recorded)
    hostile = _with(rows[1], **values)
    text = _listing([rows[0], hostile, *rows[2:]], recorded.marks)
    plain = squeue.parse_squeue(_listing(rows, recorded.marks), recorded.marks)
    read = squeue.parse_squeue(text, recorded.marks)
    assert [_fixed(info) for info in read] == [_fixed(info) for info in plain]
    assert read[1].native["name"] == _as_read(values["name"])
    assert read[1].native["comment"] == _as_read(values["comment"])
    assert read[1].native["work_dir"] == _as_read(values["work_dir"])
    assert read[0] == plain[0] and read[2:] == plain[2:]


def _sacct_rows(recorded) -> list[list[str]]:
    return [line.split(SEP)[:-1] for line in recorded.text("sacct.txt").split("\n") if line.strip()]


def test_sacct_reads_free_text_holding_separators_and_forged_rows(recorded) -> None:
    delimiter = Marks("sacctmark000").field
    rows = _sacct_rows(recorded)
    name_at, dir_at, comment_at = (SACCT_FIELDS.index(k) for k in ("JobName", "WorkDir", "Comment"))
    # A row for a job id of the user's choosing, with plain separators and a guessed mark.
    forged = GUESSED.field.join(rows[0]).replace(rows[0][0], "999999", 1)
    hostile = []
    for row in rows:
        changed = list(row)
        if "." not in row[0]:
            changed[name_at] = f"{row[name_at]}{SEP}x\n{SEP}"
            changed[dir_at] = f"/tmp/a\n{SEP}b"
            changed[comment_at] = f"\n{SEP.join(rows[0])}{SEP}\n{forged}"
        hostile.append(changed)
    listing = "".join(delimiter.join(row) + delimiter + "\n" for row in hostile)
    plain = {job.job_id: job for job in parsing.parse_sacct(recorded.text("sacct.txt"))}
    read = {job.job_id: job for job in parsing.parse_sacct(listing, delimiter)}
    assert read.keys() == plain.keys()
    for job_id, job in read.items():
        assert (job.state, job.user, job.max_rss_bytes, job.end_time) == (
            plain[job_id].state,
            plain[job_id].user,
            plain[job_id].max_rss_bytes,
            plain[job_id].end_time,
        )
        assert (job.name, job.work_dir) == (f"{plain[job_id].name}{SEP}x", f"/tmp/a\n{SEP}b")
