"""squeue's answer read as it arrives: pieces cut anywhere read as the whole text does."""

from __future__ import annotations

import itertools
import logging
import random

import pytest

from app.scheduler.slurm import squeue
from app.scheduler.types import JobInfo


def _streamed(reader: squeue.SqueueReader, data: bytes, cuts: list[int]) -> list[JobInfo]:
    reading = reader.reading()
    edges = [0, *sorted(set(cuts)), len(data)]
    for start, end in itertools.pairwise(edges):
        reading.feed(data[start:end])
    return reading.finish()


def _with_a_wide_name(text: str, marks_field: str, name: str) -> tuple[str, str]:
    """``text`` with the first record's job name prefixed by characters of 2, 3 and 4 bytes."""
    wide = f"ζé✓𝄞{name}"
    return text.replace(
        f"{marks_field}{name}{marks_field}", f"{marks_field}{wide}{marks_field}", 1
    ), wide


def test_a_listing_fed_in_any_pieces_reads_as_the_whole_text(recorded) -> None:
    active = recorded.text("squeue-active.txt")
    first = squeue.parse_squeue(active, recorded.marks)[0]
    assert first.name
    text, wide = _with_a_wide_name(active, recorded.marks.field, first.name)
    whole = squeue.parse_squeue(text, recorded.marks)
    assert whole[0].name == wide and len(whole) == len(squeue.parse_squeue(active, recorded.marks))
    data = text.encode()
    chance = random.Random(20261128)
    ways = [list(range(size, len(data), size)) for size in (1, 2, 3, 5, 7, 13, 64, 4096)]
    ways += [chance.sample(range(1, len(data)), k) for k in (1, 2, 10, 100) for _ in range(5)]
    for cuts in ways:
        assert _streamed(squeue.SqueueReader(recorded.marks), data, cuts) == whole


def test_invalid_bytes_cut_in_two_read_as_in_the_whole_text(recorded) -> None:
    active = recorded.text("squeue-active.txt")
    name = squeue.parse_squeue(active, recorded.marks)[0].name
    assert name
    data = active.encode().replace(
        f"{recorded.marks.field}{name}".encode(),
        f"{recorded.marks.field}\xff\xe2\x9c{name}".encode("latin-1"),
        1,
    )
    whole = squeue.parse_squeue(data.decode("utf-8", "replace"), recorded.marks)
    at = data.index(b"\xe2\x9c")
    assert _streamed(squeue.SqueueReader(recorded.marks), data, [at + 1, at + 2]) == whole


def test_streamed_reads_reuse_records_and_an_unfinished_one_changes_nothing(recorded) -> None:
    active = recorded.text("squeue-active.txt").encode()
    reader = squeue.SqueueReader(recorded.marks)
    first = _streamed(reader, active, [100, 1000])
    # A read the transport gave up on midway (a lost connection): never finished.
    reader.reading().feed(recorded.text("squeue-finished.txt").encode()[:500])
    again = _streamed(reader, active, [7, 333])
    assert again == first and all(a is b for a, b in zip(again, first, strict=True))


def test_a_record_longer_than_any_kept_is_left_out_and_the_others_read(
    recorded, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    records = [line for line in recorded.text("squeue-active.txt").split("\n") if line.strip()]
    assert len(records) >= 3
    marks = recorded.marks
    name = squeue.parse_squeue(records[1], marks)[0].name
    assert name
    long = records[1].replace(
        f"{marks.field}{name}{marks.field}", f"{marks.field}{'n' * 5000}{marks.field}", 1
    )
    monkeypatch.setattr(squeue, "RECORD_CAP", 1000)
    data = "\n".join([records[0], long, *records[2:]]).encode()
    with caplog.at_level(logging.WARNING, logger=squeue.__name__):
        read = _streamed(squeue.SqueueReader(marks), data, list(range(100, len(data), 100)))
    others = squeue.parse_squeue("\n".join([records[0], *records[2:]]), marks)
    assert read == others
    assert "1 record(s) left out" in caplog.text and "nnnn" in caplog.text
