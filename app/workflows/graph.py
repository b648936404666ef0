"""A workflow's steps as a graph: checked, ordered, and what a re-run must submit again.

Pure functions over plain values, so the rules are table-tested without a database.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from app.errors import ValidationFailed
from app.i18n import _
from app.scheduler.dependencies import DependencyKind

MAX_STEPS = 20
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
STEP_KINDS = (DependencyKind.AFTER_OK, DependencyKind.AFTER_ANY, DependencyKind.AFTER_NOT_OK)


@dataclass(frozen=True, slots=True)
class Step:
    """One step: a script (with its arguments) or a template (with its values), and the
    steps it waits for, all in the same way (``kind``)."""

    name: str
    script: str | None = None
    args: tuple[str, ...] = ()
    template_id: int | None = None
    parameters: Mapping[str, Any] = field(default_factory=dict)
    after: tuple[str, ...] = ()
    kind: DependencyKind = DependencyKind.AFTER_OK

    def as_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "script": self.script,
            "args": list(self.args),
            "template_id": self.template_id,
            "parameters": dict(self.parameters),
            "after": list(self.after),
            "kind": self.kind.value,
        }

    @classmethod
    def of(cls, stored: Mapping[str, Any]) -> Step:
        return cls(
            name=stored["name"],
            script=stored.get("script"),
            args=tuple(stored.get("args") or ()),
            template_id=stored.get("template_id"),
            parameters=dict(stored.get("parameters") or {}),
            after=tuple(stored.get("after") or ()),
            kind=DependencyKind(stored.get("kind") or DependencyKind.AFTER_OK),
        )


def _refused(field_name: str, message: str) -> ValidationFailed:
    return ValidationFailed(message, {field_name: message})


def _check_step(step: Step, names: set[str]) -> None:
    where = f"steps.{step.name}"
    if (step.script is None) == (step.template_id is None):
        raise _refused(where, _("Step %(name)s needs a script or a template.", name=step.name))
    if step.kind not in STEP_KINDS:
        raise _refused(where, _("Step %(name)s: choose how it waits.", name=step.name))
    for upstream in step.after:
        if upstream not in names or upstream == step.name:
            raise _refused(
                where,
                _(
                    "Step %(name)s waits for %(other)s, which is not another step.",
                    name=step.name,
                    other=upstream,
                ),
            )


def ordered(steps: Sequence[Step]) -> list[Step]:
    """The steps checked and in an order where each comes after those it waits for.

    ValidationFailed for no steps, too many, a bad or repeated name, a step with neither
    script nor template, an unknown step waited for, or steps waiting for each other.
    """
    if not 1 <= len(steps) <= MAX_STEPS:
        raise _refused("steps", _("A workflow has 1 to %(n)s steps.", n=MAX_STEPS))
    names = [step.name for step in steps]
    for name in names:
        if not _NAME.fullmatch(name) or names.count(name) > 1:
            raise _refused(
                "steps",
                _(
                    "Step names are unique: letters, digits, '.', '_' and '-' (%(name)s).",
                    name=name,
                ),
            )
    for step in steps:
        _check_step(step, set(names))
    result: list[Step] = []
    placed: set[str] = set()
    waiting = list(steps)
    while waiting:
        ready = [step for step in waiting if set(step.after) <= placed]
        if not ready:
            cycle = ", ".join(step.name for step in waiting)
            raise _refused("steps", _("These steps wait for each other: %(names)s.", names=cycle))
        result += ready
        placed |= {step.name for step in ready}
        waiting = [step for step in waiting if step.name not in placed]
    return result


def levels(steps: Sequence[Step]) -> dict[str, int]:
    """Each step's depth: 0 for those that wait for nothing, else one more than the deepest
    step it waits for (the column a drawing puts it in)."""
    depth: dict[str, int] = {}
    for step in ordered(steps):
        depth[step.name] = 1 + max((depth[name] for name in step.after), default=-1)
    return depth


def to_run_again(steps: Sequence[Step], succeeded: set[str], active: set[str]) -> list[str]:
    """The steps a re-run submits again, in order: every step that neither succeeded nor is
    still queued or running, and every step after one of those (waiting jobs included: they
    wait for a job that will not succeed now). What succeeded is never run again."""
    again: list[str] = []
    for step in ordered(steps):
        upstream_again = any(name in again for name in step.after)
        if step.name in succeeded:
            continue
        if step.name not in active or upstream_again:
            again.append(step.name)
    return again
