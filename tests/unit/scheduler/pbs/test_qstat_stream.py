"""qstat's JSON read as it arrives: pieces cut anywhere read as the whole answer does."""

from __future__ import annotations

import itertools
import json
import random
from pathlib import Path

import pytest

from app.scheduler.pbs.parsing import parse_jobs
from app.scheduler.pbs.qstat_stream import QstatAnswerError, QstatReader
from app.scheduler.types import JobInfo

RECORDED = Path(__file__).resolve().parents[3] / "fixtures" / "pbs" / "23.06"
HISTORY = (RECORDED / "qstat-history.json").read_text()


def _streamed(reader: QstatReader, data: bytes, cuts: list[int]) -> list[JobInfo]:
    reading = reader.reading()
    edges = [0, *sorted(set(cuts)), len(data)]
    for start, end in itertools.pairwise(edges):
        reading.feed(data[start:end])
    return reading.finish()


def _with_a_wide_name() -> str:
    listing = json.loads(HISTORY)
    first = next(iter(listing["Jobs"].values()))
    first["Job_Name"] = 'ζé✓𝄞 "quoted" \\ {brace} , : end'
    # PBS's own layout (tabs, a member per line), as qstat prints it.
    return json.dumps(listing, indent="\t", ensure_ascii=False)


def test_an_answer_fed_in_any_pieces_reads_as_the_whole_answer() -> None:
    text = _with_a_wide_name()
    whole = parse_jobs(text)
    assert whole[0].name == 'ζé✓𝄞 "quoted" \\ {brace} , : end' and len(whole) > 20
    assert whole[1:] == parse_jobs(HISTORY)[1:]
    data = text.encode()
    chance = random.Random(20261128)
    ways = [list(range(size, len(data), size)) for size in (1, 2, 3, 7, 64, 4096)]
    ways += [chance.sample(range(1, len(data)), k) for k in (1, 2, 10, 100) for _ in range(5)]
    for cuts in ways:
        assert _streamed(QstatReader(), data, cuts) == whole
    # qstat's own bytes, with their tabs, cut one by one.
    assert _streamed(QstatReader(), HISTORY.encode(), list(range(1, len(HISTORY)))) == parse_jobs(
        HISTORY
    )


@pytest.mark.parametrize("answer", ["", "\n", " \t\n"])
def test_an_empty_answer_is_no_job(answer: str) -> None:
    reading = QstatReader().reading()
    reading.feed(answer.encode())
    assert reading.blank and reading.finish() == []


def test_streamed_reads_reuse_records_and_an_unfinished_one_changes_nothing() -> None:
    reader = QstatReader()
    first = _streamed(reader, HISTORY.encode(), [100, 5000])
    cut_short = reader.reading()
    cut_short.feed(HISTORY.encode()[:20_000])
    assert not cut_short.blank
    with pytest.raises(QstatAnswerError):
        cut_short.finish()
    reader.reading().feed(HISTORY.encode()[:30_000])  # a read the transport gave up on
    again = _streamed(reader, HISTORY.encode(), [7, 333])
    assert again == first and all(a is b for a, b in zip(again, first, strict=True))


@pytest.mark.parametrize(
    "answer",
    [
        "qstat: cannot connect to server",
        '["Jobs"]',
        '{"Jobs": []}',
        '{"Jobs": {"1.pbshead": 7}}',
        '{"Jobs" {"1.pbshead": {}}}',
        '{"Jobs": {"1.pbshead": {}}',
    ],
)
def test_what_is_not_qstats_json_is_refused(answer: str) -> None:
    reading = QstatReader().reading()
    with pytest.raises(QstatAnswerError):
        reading.feed(answer.encode())
        reading.finish()
