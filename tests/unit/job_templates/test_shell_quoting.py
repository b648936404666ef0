"""Property: no parameter value changes a rendered script's syntax, in any quoting context.

Every template below places one reference in a different bash context. For arbitrary text
(quotes, ``$(...)``, backticks, newlines, ``#SBATCH``, look-alikes) the rendered script
parses, runs without executing anything from the value, prints the value exactly where the
context expands it, and carries exactly the ``#SBATCH`` lines its template has.
"""

from __future__ import annotations

import os
import subprocess
import uuid
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.job_templates.script_language import evaluate, parse
from app.job_templates.shell_quoting import UnsafePlacement, quote_pieces

# name -> (template, what the script prints for value v)
EXPANDING = {
    "unquoted": ("printf '%s' {{ v }}", lambda v: v),
    "double quotes": ("printf '%s' \"<{{ v }}>\"", lambda v: f"<{v}>"),
    "single quotes": ("printf '%s' '<{{ v }}>'", lambda v: f"<{v}>"),
    "ansi-c quotes": ("printf '%s' $'<{{ v }}>'", lambda v: f"<{v}>"),
    "assignment": ("X={{ v }}\nprintf '%s' \"$X\"", lambda v: v),
    # A command substitution drops trailing newlines, whatever produced them.
    "command substitution": ("printf '%s' \"$(printf '%s' {{ v }})\"", lambda v: v.rstrip("\n")),
    "backticks": ("printf '%s' \"`printf '%s' {{ v }}`\"", lambda v: v.rstrip("\n")),
    "nested in double quotes": (
        'printf \'%s\' "a $(printf "%s" "{{ v }}") b"',
        lambda v: f"a {v.rstrip(chr(10))} b",
    ),
    "heredoc": ("cat <<EOF\n<{{ v }}>\nEOF", lambda v: f"<{v}>\n"),
    "heredoc with tabs": ("cat <<-EOF\n\t<{{ v }}>\n\tEOF", lambda v: f"<{v}>\n"),
    "test": (
        '[[ {{ v }} == "$Y" ]] && printf same || printf differ',
        lambda v: "same" if v == "same" else "differ",
    ),
    "comment": ("# note {{ v }}\nprintf '%s' ok", lambda v: "ok"),
}
# Values inert in every context are written as they are; others are refused here.
NUMERIC_ONLY = {
    "arithmetic": ("printf '%s' $(( {{ v }} + 1 ))", None),
    "double parentheses": ("(( {{ v }} > 0 )) ; printf ok", None),
    "parameter expansion": ("printf '%s' \"${Y:-{{ v }}}\"", None),
    "arithmetic test": ("[[ {{ v }} -eq 1 ]]; printf ok", None),
    "quoted heredoc": ("cat <<'EOF'\n{{ v }}\nEOF", None),
}

FIXTURES = [HealthCheck.function_scoped_fixture]
hostile_text = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"),
    max_size=60,
) | st.sampled_from(
    [
        "$(touch MARK)",
        "`touch MARK`",
        "'; touch MARK; '",
        '"; touch MARK; "',
        "x\n#SBATCH --account=chemistry\ntouch MARK",
        "EOF\ntouch MARK\nEOF",
        "a[$(touch MARK)]",
        "\\",
        "$'\\x27'; touch MARK",
        "${IFS}touch${IFS}MARK",
        "*",
        "~root",
        "-n",
        "",
        "same",
    ]
)


def render(template: str, value: str) -> tuple[str, dict[str, str]]:
    source = f"#!/bin/bash\n#SBATCH --comment=fixed\nset -u\n{template}\n"
    quoted = quote_pieces(evaluate(parse(source), {"v": value}), {"v": value})
    return quoted.script, quoted.environment


def run(script: str, environment: dict[str, str], workdir: Path) -> str:
    env = {"PATH": os.environ["PATH"], "Y": "same", **environment}
    # Bytes, not text mode: universal newlines would turn a value's \r into \n.
    result = subprocess.run(
        ["bash", "-c", script], capture_output=True, env=env, cwd=workdir, timeout=10
    )
    return result.stdout.decode()


def sbatch_lines(script: str) -> list[str]:
    return [line for line in script.splitlines() if line.lstrip().startswith("#SBATCH")]


@pytest.mark.parametrize("context", sorted(EXPANDING))
@settings(max_examples=60, deadline=None, suppress_health_check=FIXTURES)
@given(value=hostile_text)
def test_a_value_is_data_in_every_expanding_context(
    context: str, value: str, tmp_path: Path
) -> None:
    template, expected = EXPANDING[context]
    marker = tmp_path / f"pwned-{uuid.uuid4().hex}"
    value = value.replace("MARK", str(marker))
    script, environment = render(template, value)
    if not _inert(value):
        assert environment == {"PORTAL_PARAM_v": value}
    assert sbatch_lines(script) == ["#SBATCH --comment=fixed"]
    printed = run(script, environment, tmp_path)
    assert not marker.exists(), script
    assert printed == expected(value), script


def _inert(value: str) -> bool:
    return all(char.isascii() and (char.isalnum() or char in "_./:@%+,-") for char in value)


@pytest.mark.parametrize("context", sorted(NUMERIC_ONLY))
@settings(max_examples=40, deadline=None, suppress_health_check=FIXTURES)
@given(value=hostile_text)
def test_where_bash_evaluates_a_value_only_numbers_or_inert_words_pass(
    context: str, value: str, tmp_path: Path
) -> None:
    template, _ = NUMERIC_ONLY[context]
    marker = tmp_path / f"pwned-{uuid.uuid4().hex}"
    value = value.replace("MARK", str(marker))
    try:
        script, environment = render(template, value)
    except UnsafePlacement:
        return
    assert value in script and _inert(value)
    run(script, environment, tmp_path)
    assert not marker.exists(), script


@pytest.mark.parametrize("number", ["0", "7", "-3", "2.5"])
def test_numbers_are_written_as_they_are_in_arithmetic(number: str, tmp_path: Path) -> None:
    script, environment = render("printf '%s' $(( ${#Y} + {{ v }} ))", number)
    assert environment == {}
    if "." not in number:
        assert run(script, environment, tmp_path) == str(4 + int(number))


def test_a_backslash_or_dollar_before_a_reference_is_refused() -> None:
    for template in ("echo \\{{ v }}", "echo ${{ v }}"):
        with pytest.raises(UnsafePlacement):
            render(template, "x y")
