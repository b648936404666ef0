"""A ``words`` parameter (arguments, modules): several words as a command's arguments, one
string anywhere else, and in no context a way to change the script's syntax."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.job_templates.coerce import coerce
from app.job_templates.schema import Parameter
from app.job_templates.script_language import evaluate, parse
from app.job_templates.shell_quoting import UnsafePlacement, Words, quote_pieces
from tests.unit.job_templates.test_shell_quoting import EXPANDING, hostile_text, run, sbatch_lines

WORDS = Parameter(name="v", label="Words", type="words", required=False)
FIXTURES = [HealthCheck.function_scoped_fixture]


def render(template: str, words: Words) -> tuple[str, dict[str, str]]:
    source = f"#!/bin/bash\n#SBATCH --comment=fixed\nset -u\n{template}\n"
    quoted = quote_pieces(evaluate(parse(source), {"v": words}), {"v": words})
    return quoted.script, quoted.environment


def typed(text: str) -> Words:
    value = coerce(WORDS, None, text)  # type: ignore[arg-type]
    assert isinstance(value, Words)
    return value


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("cuda pytorch", ("cuda", "pytorch")),
        ('--epochs 10 --title "first run"', ("--epochs", "10", "--title", "first run")),
        ("--note 'it''s'", ("--note", "its")),
        ("   ", ()),
    ],
)
def test_typed_text_splits_as_a_terminal_splits_it(text: str, words: tuple[str, ...]) -> None:
    assert typed(text).items == words


def test_an_unclosed_quote_is_explained() -> None:
    with pytest.raises(ValueError, match="a quote is not closed"):
        typed('--title "first run')


def test_each_word_is_its_own_argument(tmp_path: Path) -> None:
    script, environment = render("printf '<%s>' {{ v }}", typed('cuda "py torch" -n'))
    assert "printf '<%s>' cuda \"${PORTAL_PARAM_v_W2}\" -n" in script
    assert run(script, environment, tmp_path) == "<cuda><py torch><-n>"


def test_no_words_add_no_argument(tmp_path: Path) -> None:
    script, environment = render("printf '<%s>' first {{ v }}", Words(()))
    assert run(script, environment, tmp_path) == "<first>"


def test_words_inside_a_test_are_refused() -> None:
    with pytest.raises(UnsafePlacement, match="list of words"):
        render("[[ {{ v }} == x ]]", Words(("a", "b")))


def test_words_glued_to_text_stay_one_string(tmp_path: Path) -> None:
    # Split after X=, the second word would run as a command.
    script, environment = render("X={{ v }}\nprintf '<%s>' \"$X\" --opt={{ v }}", typed("a b"))
    assert run(script, environment, tmp_path) == "<a b><--opt=a b>"


# Contexts where the words are arguments of printf '%s' (each printed, nothing between).
AS_ARGUMENTS = {"unquoted", "command substitution", "backticks"}


@pytest.mark.parametrize("context", sorted(set(EXPANDING) - {"test"}))
@settings(max_examples=40, deadline=None, suppress_health_check=FIXTURES)
@given(values=st.lists(hostile_text, max_size=4))
def test_hostile_words_stay_data_in_every_context(
    context: str, values: list[str], tmp_path: Path
) -> None:
    marker = tmp_path / f"pwned-{uuid.uuid4().hex}"
    words = Words(tuple(v.replace("MARK", str(marker)) for v in values))
    template, expected = EXPANDING[context]
    script, environment = render(template, words)
    assert sbatch_lines(script) == ["#SBATCH --comment=fixed"]
    printed = run(script, environment, tmp_path)
    assert not marker.exists(), script
    shown = "".join(words.items) if context in AS_ARGUMENTS else " ".join(words.items)
    assert printed == expected(shown), script
