"""JSON-lines logging with the request id and user of the request being served."""

from __future__ import annotations

import json
import logging
import sys
from contextvars import ContextVar
from datetime import UTC, datetime
from typing import Any

request_id_var: ContextVar[str | None] = ContextVar("request_id", default=None)
user_id_var: ContextVar[int | None] = ContextVar("user_id", default=None)
# Attributes an access-log call passes through ``extra=``; copied into the JSON line.
REQUEST_FIELDS = ("method", "path", "status", "duration_ms")


class JsonFormatter(logging.Formatter):
    """One JSON object per line: easy to ship to any log store and to grep."""

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        request_id = getattr(record, "request_id", None) or request_id_var.get()
        if request_id is not None:
            line["request_id"] = request_id
        user_id = getattr(record, "user_id", None) or user_id_var.get()
        if user_id is not None:
            line["user_id"] = user_id
        for field in REQUEST_FIELDS:
            value = getattr(record, field, None)
            if value is not None:
                line[field] = value
        if record.exc_info:
            line["exception"] = self.formatException(record.exc_info)
        return json.dumps(line, default=str)


def configure_json_logging(level: int = logging.INFO) -> None:
    """Send every logger's records to stderr as JSON lines (idempotent)."""
    root = logging.getLogger()
    if any(isinstance(h.formatter, JsonFormatter) for h in root.handlers):
        return
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter())
    root.addHandler(handler)
    root.setLevel(level)
    # asyncssh logs every channel at INFO: one line per scheduler command is noise.
    logging.getLogger("asyncssh").setLevel(logging.WARNING)
