"""What a template version must pass before it is saved, beyond its syntax and schema.

A version saved with a reference to no parameter, or with a reference where some value a
user may legitimately type cannot be placed safely, would only fail on the submit form, where
the message blames the person submitting. Rendering it here with a sample of each type (one
that needs quoting wherever a type allows it) finds those cases while its author is editing.
"""

from __future__ import annotations

from typing import Any

from app.i18n import _
from app.job_templates.schema import Parameter, TemplateSchema
from app.job_templates.script_language import Template, evaluate
from app.job_templates.shell_quoting import UnsafePlacement, Words, quote_pieces

# Values that exercise the strictest placement each type can meet: text with a space must
# travel through the environment, numbers may go into arithmetic.
_SAMPLES: dict[str, Any] = {
    "text": "a b",
    "words": Words(("a b", "c")),
    "number": 1.5,
    "duration": 60,
    "memory": 1024,
    "path": "/home/user/a b",
    "partition": "debug",
    "account": "account",
    "gpu": "1",
}


def _sample(parameter: Parameter, filled: bool) -> Any:
    if parameter.type == "boolean":
        return filled
    if not filled and not parameter.required:
        return Words(()) if parameter.type == "words" else None
    if parameter.type == "integer":
        return int(parameter.min) if parameter.min is not None else 1
    if parameter.type == "choice":
        # A choice that needs quoting is the one that can fail.
        return max(parameter.choices, key=lambda choice: not choice.isalnum())
    return _SAMPLES[parameter.type]


def _refs(names: list[str]) -> str:
    return ", ".join("{{ " + name + " }}" for name in names)


def _placement_problem(template: Template, schema: TemplateSchema) -> str | None:
    parameters = (*schema.parameters, schema.account_parameter())
    # Conditionals take one branch with every value filled and the other with optional
    # values left empty, so both branches are placed.
    for filled in (True, False):
        values = {p.name: _sample(p, filled) for p in parameters}
        try:
            quote_pieces(evaluate(template, values), values)
        except UnsafePlacement as error:
            return _("Template error: %(error)s.", error=str(error))
    return None


def draft_problems(template: Template, schema: TemplateSchema) -> dict[str, str]:
    """Plain sentences keyed by editor field ("script", "parameters"); empty when fine."""
    used = template.names()
    known = {p.name for p in (*schema.parameters, schema.account_parameter())}
    problems: dict[str, str] = {}
    unknown = sorted(used - known)
    if unknown:
        problems["script"] = _(
            "The script uses %(references)s, which no parameter below is called: "
            "add the parameter or correct the name.",
            references=_refs(unknown),
        )
    else:
        placement = _placement_problem(template, schema)
        if placement:
            problems["script"] = placement
    unused = [
        p.name
        for p in schema.parameters
        if p.name not in used and p.maps_to is None and p.type != "account"
    ]
    if unused:
        problems["parameters"] = _(
            "Not used anywhere: %(names)s. Put %(reference)s in the script, "
            "let the parameter set an sbatch option, or remove it.",
            names=", ".join(unused),
            reference=_refs(unused[:1]),
        )
    return problems
