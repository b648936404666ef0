"""Reads the template editor and submit forms into plain values for the services."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from starlette.datastructures import FormData

from app.job_templates.schema import TemplateSchema
from app.job_templates.service import TemplateDraft

_ROW_KEY = re.compile(r"params-(\d{1,3})-(\w+)")
ROW_FIELDS = ("name", "label", "type", "help", "default", "min", "max", "choices", "maps_to")
MAX_ROWS = 60


@dataclass
class EditorState:
    """The editor as the user left it, valid or not, so it can be shown again."""

    name: str = ""
    description: str = ""
    scope: str = "personal"
    project_id: int | None = None
    script: str = "#!/bin/bash\n"
    job_name: str = "job"
    change_note: str = ""
    rows: list[dict[str, Any]] = field(default_factory=list)

    def schema(self) -> dict[str, Any]:
        return {"parameters": [_row_to_parameter(row) for row in self.rows]}

    def draft(self) -> TemplateDraft:
        return TemplateDraft(
            name=self.name,
            description=self.description,
            script=self.script,
            parameter_schema=self.schema(),
            defaults={"job_name": self.job_name},
            scope=self.scope,
            project_id=self.project_id,
            change_note=self.change_note,
        )


def _number(text: str) -> float | str | None:
    if not text.strip():
        return None
    try:
        return float(text)
    except ValueError:
        return text  # left for the schema check to explain


def _row_to_parameter(row: dict[str, Any]) -> dict[str, Any]:
    parameter: dict[str, Any] = {
        "name": row.get("name", "").strip(),
        "label": row.get("label", "").strip() or row.get("name", "").strip(),
        "type": row.get("type", "text"),
        "help": row.get("help", "").strip(),
        "required": bool(row.get("required")),
    }
    if row.get("default", "") != "":
        parameter["default"] = row["default"]
    for bound in ("min", "max"):
        value = _number(str(row.get(bound, "")))
        if value is not None:
            parameter[bound] = value
    choices = [c.strip() for c in str(row.get("choices", "")).split(",") if c.strip()]
    if choices:
        parameter["choices"] = choices
    if row.get("maps_to"):
        parameter["maps_to"] = row["maps_to"]
    return parameter


def rows_from_schema(schema: TemplateSchema) -> list[dict[str, Any]]:
    return [
        {
            "name": p.name,
            "label": p.label,
            "type": p.type,
            "help": p.help,
            "required": p.required,
            "default": "" if p.default is None else str(p.default),
            "min": "" if p.min is None else _plain(p.min),
            "max": "" if p.max is None else _plain(p.max),
            "choices": ", ".join(p.choices),
            "maps_to": p.maps_to or "",
        }
        for p in schema.parameters
    ]


def _plain(number: float) -> str:
    return str(int(number)) if float(number).is_integer() else str(number)


def _text(form: FormData, key: str, default: str = "") -> str:
    value = form.get(key)
    return value if isinstance(value, str) else default


def _rows(form: FormData) -> list[dict[str, Any]]:
    rows: dict[int, dict[str, Any]] = {}
    for key in form:
        match = _ROW_KEY.fullmatch(key)
        if match and int(match[1]) < MAX_ROWS:
            rows.setdefault(int(match[1]), {})[match[2]] = _text(form, key)
    return [rows[index] for index in sorted(rows)]


def parse_editor(form: FormData) -> EditorState:
    project = _text(form, "project_id")
    return EditorState(
        name=_text(form, "name"),
        description=_text(form, "description"),
        scope=_text(form, "scope", "personal"),
        project_id=int(project) if project.isdigit() else None,
        # Browsers send CRLF from textareas; scripts run on Linux.
        script=_text(form, "script").replace("\r\n", "\n"),
        job_name=_text(form, "job_name", "job"),
        change_note=_text(form, "change_note"),
        rows=_rows(form),
    )


def apply_row_action(state: EditorState, action: str) -> bool:
    """Adds or removes a parameter row; True when the action was one of those."""
    if action == "add" and len(state.rows) < MAX_ROWS:
        state.rows.append({"type": "text", "required": "on"})
        return True
    if action.startswith("remove-") and action[7:].isdigit():
        index = int(action[7:])
        if 0 <= index < len(state.rows):
            del state.rows[index]
        return True
    return False


def submitted_values(form: FormData, schema: TemplateSchema) -> dict[str, Any]:
    """Raw values keyed by parameter name; GPU pickers arrive as two inputs."""
    values: dict[str, Any] = {"job_name": _text(form, "job_name")}
    for parameter in (*schema.parameters, schema.account_parameter()):
        name = parameter.name
        if parameter.type == "gpu":
            values[name] = {
                "type": _text(form, f"{name}__type"),
                "count": _text(form, f"{name}__count"),
            }
        elif parameter.type == "boolean":
            values[name] = _text(form, name) or "off"
        else:
            values[name] = _text(form, name)
    return values
