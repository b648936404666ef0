"""Turns one submitted form value into a typed value, or a plain-language complaint.

Every check here is what stands between a browser and the job script or sbatch's argv, so
each type accepts only the shape it names and refuses control characters outright. The
complaints are in the current language.
"""

from __future__ import annotations

import math
import re
import shlex
from dataclasses import dataclass
from typing import Any

from app.i18n import _
from app.job_templates.context import SubmitContext
from app.job_templates.schema import DEFAULT_MAX_LENGTH, Parameter
from app.job_templates.shell_quoting import Words
from app.job_templates.values import (
    format_duration,
    format_memory,
    parse_duration,
    parse_memory,
)
from app.scheduler.directive_values import array_tasks
from app.scheduler.errors import InvalidSpec
from app.scheduler.messages import translate
from app.scheduler.validation import resolve_log_path

_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_SURROGATE = re.compile(r"[\ud800-\udfff]")
_INTEGER = re.compile(r"[+-]?\d{1,12}")
_NUMBER = re.compile(r"[+-]?(\d{1,12}(\.\d{0,12})?|\.\d{1,12})([eE][+-]?\d{1,3})?")
_IDENT = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
_PATH_CHARS = re.compile(r"/[A-Za-z0-9_.+%@=,/ -]*")
_TRUE = frozenset({"on", "true", "1", "yes"})
_FALSE = frozenset({"", "off", "false", "0", "no"})
MAX_GPUS = 16
MAX_WORDS = 200


@dataclass(frozen=True, slots=True)
class GpuRequest:
    type: str | None
    count: int

    def __str__(self) -> str:
        return f"{self.type}:{self.count}" if self.type else str(self.count)


def is_empty(raw: Any) -> bool:
    if raw is None:
        return True
    if isinstance(raw, str):
        return raw.strip() == ""
    if isinstance(raw, dict):
        return is_empty(raw.get("count"))
    return False


def _text(raw: Any) -> str:
    if not isinstance(raw, str | int | float) or isinstance(raw, bool):
        raise ValueError(_("must be plain text"))
    text = str(raw)
    if _CONTROL.search(text):
        raise ValueError(_("must be a single line without control characters"))
    if _SURROGATE.search(text):
        # A lone surrogate cannot be encoded for the cluster, so it is refused here.
        raise ValueError(_("must be valid Unicode text"))
    return text.strip()


def _bounded(parameter: Parameter, value: float, shown: str | None = None) -> None:
    if parameter.min is not None and value < parameter.min:
        raise ValueError(_("must be at least %(least)s", least=shown or _plain(parameter.min)))
    if parameter.max is not None and value > parameter.max:
        raise ValueError(_("must be at most %(most)s", most=shown or _plain(parameter.max)))


def _plain(number: float) -> str:
    return str(int(number)) if float(number).is_integer() else str(number)


def _one_of(value: str, allowed: tuple[str, ...], what: str) -> str:
    if value not in allowed:
        raise ValueError(
            _("%(problem)s; choose one of: %(choices)s", problem=what, choices=", ".join(allowed))
        )
    return value


def _coerce_text(parameter: Parameter, raw: Any) -> str:
    text = _text(raw)
    limit = int(parameter.max) if parameter.max is not None else DEFAULT_MAX_LENGTH
    if len(text) > limit:
        raise ValueError(_("must be at most %(limit)s characters", limit=limit))
    if parameter.maps_to == "array":
        try:
            array_tasks(text)
        except ValueError as error:
            raise ValueError(translate(str(error), _)) from None
    return text


def _coerce_words(parameter: Parameter, raw: Any) -> Words:
    text = _coerce_text(parameter, raw)
    try:
        # Quotes group words as in a terminal: --title "my run" is two arguments.
        items = shlex.split(text)
    except ValueError:
        raise ValueError(_("a quote is not closed; close it or remove it")) from None
    if len(items) > MAX_WORDS:
        raise ValueError(_("must be at most %(limit)s words", limit=MAX_WORDS))
    return Words(tuple(items))


def _coerce_integer(parameter: Parameter, raw: Any) -> int:
    text = _text(raw)
    if not _INTEGER.fullmatch(text):
        raise ValueError(_("must be a whole number"))
    value = int(text)
    _bounded(parameter, value)
    if parameter.maps_to and value < 1:
        raise ValueError(_("must be at least %(least)s", least=1))
    return value


def _coerce_number(parameter: Parameter, raw: Any) -> float:
    text = _text(raw)
    if not _NUMBER.fullmatch(text) or not math.isfinite(float(text)):
        raise ValueError(_("must be a number, for example 0.5"))
    value = float(text)
    _bounded(parameter, value)
    return value


def _coerce_boolean(_parameter: Parameter, raw: Any) -> bool:
    if isinstance(raw, bool):
        return raw
    text = _text(raw).lower()
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    raise ValueError(_("must be yes or no"))


def _coerce_duration(parameter: Parameter, raw: Any) -> int:
    minutes = parse_duration(_text(raw))
    shown_min = format_duration(int(parameter.min)) if parameter.min is not None else None
    shown_max = format_duration(int(parameter.max)) if parameter.max is not None else None
    if parameter.min is not None and minutes < parameter.min:
        raise ValueError(_("must be at least %(least)s", least=shown_min))
    if parameter.max is not None and minutes > parameter.max:
        raise ValueError(_("must be at most %(most)s", most=shown_max))
    return minutes


def _coerce_memory(parameter: Parameter, raw: Any) -> int:
    megabytes = parse_memory(_text(raw))
    if parameter.min is not None and megabytes < parameter.min:
        raise ValueError(_("must be at least %(least)s", least=format_memory(int(parameter.min))))
    if parameter.max is not None and megabytes > parameter.max:
        raise ValueError(_("must be at most %(most)s", most=format_memory(int(parameter.max))))
    return megabytes


def _coerce_path(context: SubmitContext, raw: Any) -> str:
    text = _text(raw)
    if text in ("~", "$HOME", "${HOME}") and context.home:
        text = context.home
    for prefix in ("~/", "$HOME/", "${HOME}/"):
        if text.startswith(prefix) and context.home:
            text = context.home.rstrip("/") + "/" + text[len(prefix) :]
    if not text.startswith("/"):
        raise ValueError(
            _(
                "must be a full path starting with %(root)s (or %(home)s for your home)",
                root="/",
                home="~/",
            )
        )
    if not _PATH_CHARS.fullmatch(text):
        raise ValueError(
            _("may only contain letters, digits, spaces and %(symbols)s", symbols="/._-+%@=,")
        )
    try:
        return resolve_log_path(text, context.roots)
    except InvalidSpec as error:
        if "outside" in error.message:
            raise ValueError(_under(context.roots)) from None
        raise ValueError(translate(error.message, _)) from None


def _under(roots: tuple[str, ...]) -> str:
    shown = roots[0] if roots else ""
    for root in roots[1:]:
        shown = _("%(first)s or %(second)s", first=shown, second=root)
    return _("must be under %(roots)s", roots=shown)


def _coerce_partition(parameter: Parameter, context: SubmitContext, raw: Any) -> str:
    text = _text(raw)
    known = tuple(p.name for p in context.partitions) or parameter.choices
    if known:
        what = _(
            "%(value)s is not a partition on %(cluster)s", value=repr(text), cluster=context.cluster
        )
        return _one_of(text, known, what)
    if not _IDENT.fullmatch(text):
        raise ValueError(_("use letters, digits and ._- only"))
    return text


def _coerce_gpu(parameter: Parameter, context: SubmitContext, raw: Any) -> GpuRequest | None:
    if isinstance(raw, dict):
        gpu_type, count_text = raw.get("type") or None, raw.get("count")
    else:
        gpu_type, _colon, count_text = _text(raw).rpartition(":")
        gpu_type = gpu_type or None
    count_parameter = parameter.model_copy(update={"maps_to": None})
    count = _coerce_integer(count_parameter, count_text)
    if not 0 <= count <= MAX_GPUS:
        raise ValueError(_("ask for between 0 and %(most)s GPUs", most=MAX_GPUS))
    if count == 0:
        return None
    known = context.gpu_types or parameter.choices
    if gpu_type is not None:
        gpu_type = _text(gpu_type)
        if known:
            what = _(
                "%(cluster)s has no GPU type %(type)s", cluster=context.cluster, type=repr(gpu_type)
            )
            _one_of(gpu_type, known, what)
        elif not _IDENT.fullmatch(gpu_type):
            raise ValueError(
                _("the GPU type may only contain letters, digits and %(symbols)s", symbols="._-")
            )
    return GpuRequest(gpu_type, count)


def coerce(parameter: Parameter, context: SubmitContext, raw: Any) -> Any:
    """The typed value of ``raw`` for ``parameter``; ValueError with a message otherwise."""
    kind = parameter.type
    if kind == "text":
        return _coerce_text(parameter, raw)
    if kind == "words":
        return _coerce_words(parameter, raw)
    if kind == "integer":
        return _coerce_integer(parameter, raw)
    if kind == "number":
        return _coerce_number(parameter, raw)
    if kind == "boolean":
        return _coerce_boolean(parameter, raw)
    if kind == "choice":
        return _one_of(_text(raw), parameter.choices, _("not one of the options"))
    if kind == "duration":
        return _coerce_duration(parameter, raw)
    if kind == "memory":
        return _coerce_memory(parameter, raw)
    if kind == "path":
        return _coerce_path(context, raw)
    if kind == "partition":
        return _coerce_partition(parameter, context, raw)
    if kind == "account":
        text = _text(raw)
        return _one_of(
            text, context.accounts, _("you cannot charge account %(account)s", account=repr(text))
        )
    return _coerce_gpu(parameter, context, raw)
