"""A workflow's graph: order, depth, refusals, and what a re-run submits again."""

import pytest

from app.errors import ValidationFailed
from app.workflows.graph import Step, levels, ordered, to_run_again

S = "#!/bin/bash\ntrue\n"
DIAMOND = [
    Step("report", S, after=("left", "right")),
    Step("left", S, after=("prepare",)),
    Step("right", S, after=("prepare",)),
    Step("prepare", S),
]


def test_each_step_comes_after_those_it_waits_for() -> None:
    assert [s.name for s in ordered(DIAMOND)] == ["prepare", "left", "right", "report"]
    assert levels(DIAMOND) == {"prepare": 0, "left": 1, "right": 1, "report": 2}


@pytest.mark.parametrize(
    ("steps", "words"),
    [
        ([], "A workflow has 1 to 20 steps."),
        ([Step("a", S), Step("a", S)], "Step names are unique"),
        ([Step("a b", S)], "Step names are unique"),
        ([Step("a")], "Step a needs a script or a template."),
        ([Step("a", S, template_id=3)], "Step a needs a script or a template."),
        ([Step("a", S, after=("z",))], "Step a waits for z, which is not another step."),
        ([Step("a", S, after=("b",)), Step("b", S, after=("a",))], "wait for each other: a, b"),
    ],
)
def test_bad_graphs_are_refused_in_plain_words(steps: list[Step], words: str) -> None:
    with pytest.raises(ValidationFailed) as refused:
        ordered(steps)
    assert words in refused.value.detail


@pytest.mark.parametrize(
    ("succeeded", "active", "again"),
    [
        ({"prepare"}, {"right", "report"}, ["left", "report"]),  # left failed
        ({"prepare", "left", "right", "report"}, set(), []),
        (set(), set(), ["prepare", "left", "right", "report"]),  # nothing submitted
        ({"prepare", "left"}, {"right", "report"}, []),  # still going: nothing to redo
    ],
)
def test_a_rerun_never_runs_what_succeeded(
    succeeded: set[str], active: set[str], again: list[str]
) -> None:
    assert to_run_again(DIAMOND, succeeded, active) == again
