"""A version that would fail on the submit form, whatever its user typed, is refused on save."""

from __future__ import annotations

from typing import Any

import pytest

from app.job_templates.checks import draft_problems
from app.job_templates.resources import check_nodes_tasks
from app.job_templates.schema import load_schema
from app.job_templates.script_language import parse


def problems(script: str, *parameters: dict[str, Any]) -> dict[str, str]:
    schema = load_schema({"parameters": list(parameters)})
    return draft_problems(parse("#!/bin/bash\n" + script), schema)


TEXT = {"name": "who", "label": "Who", "type": "text"}
STEPS = {"name": "steps", "label": "Steps", "type": "integer", "min": 1}


def test_a_sound_version_has_no_problems() -> None:
    assert problems("echo {{ who }} $(( {{ steps }} + 1 ))", TEXT, STEPS) == {}


def test_a_reference_to_no_parameter_is_named() -> None:
    found = problems("echo {{ whom }}", TEXT)
    assert found["script"] == (
        "The script uses {{ whom }}, which no parameter below is called: "
        "add the parameter or correct the name."
    )


def test_a_parameter_the_script_never_uses_is_named() -> None:
    found = problems("echo hello", TEXT)
    assert found == {
        "parameters": "Not used anywhere: who. Put {{ who }} in the script, "
        "let the parameter set an sbatch option, or remove it."
    }


def test_a_parameter_that_sets_an_sbatch_option_needs_no_reference() -> None:
    nodes = {"name": "nodes", "label": "Nodes", "type": "integer", "maps_to": "nodes"}
    assert problems("srun hostname", nodes) == {}


@pytest.mark.parametrize(
    "script",
    [
        "echo $(( {{ who }} + 1 ))",
        "cat <<'EOF'\n{{ who }}\nEOF",
        "{% if verbose %}echo $(( {{ who }} ))\n{% endif %}",
    ],
)
def test_text_where_only_numbers_or_inert_words_can_go_is_refused(script: str) -> None:
    verbose = {"name": "verbose", "label": "Verbose", "type": "boolean", "required": False}
    found = problems(script, TEXT, verbose)
    assert found["script"].startswith("Template error: {{ who }} ")


def test_an_optional_value_left_empty_is_placed_too() -> None:
    optional = {**TEXT, "required": False}
    found = problems("{% if not who %}echo $(( {{ who }} ))\n{% endif %}", optional)
    assert "arithmetic" in found["script"]


@pytest.mark.parametrize(
    ("nodes", "tasks", "message"),
    [
        (2, 1, "2 nodes need at least 2 tasks, one per node; ask for 2 tasks or for 1 node."),
        (4, 3, "4 nodes need at least 4 tasks, one per node; ask for 4 tasks or for 3 nodes."),
    ],
)
def test_fewer_tasks_than_nodes_is_explained_at_the_nodes_field(
    nodes: int, tasks: int, message: str
) -> None:
    schema = load_schema(
        {
            "parameters": [
                {"name": "n", "label": "Nodes", "type": "integer", "maps_to": "nodes"},
                {"name": "t", "label": "Tasks", "type": "integer", "maps_to": "ntasks"},
            ]
        }
    )
    assert check_nodes_tasks(schema, {"n": nodes, "t": tasks}, {}) == {"n": message}
    assert check_nodes_tasks(schema, {"n": nodes, "t": nodes}, {}) == {}
