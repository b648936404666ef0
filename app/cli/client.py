"""A small synchronous client for the portal's /api/v1, with errors mapped to exit codes."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import httpx

from app.cli.config import ClientConfig
from app.cli.exit_codes import ExitCode, for_http_status

USER_AGENT = "hpcportal-cli/0.1"

API_PREFIX = "/api/v1"
DEFAULT_TIMEOUT = 30.0


class CliError(Exception):
    """Something the user should read, and the exit status that goes with it."""

    def __init__(self, message: str, exit_code: ExitCode = ExitCode.ERROR) -> None:
        super().__init__(message)
        self.message = message
        self.exit_code = exit_code


class ApiError(CliError):
    """The portal answered with an error body ``{"error": type, "detail": message}``."""

    def __init__(self, status: int, error_type: str, detail: str, body: Mapping[str, Any]):
        super().__init__(f"{detail} ({error_type}, HTTP {status})", for_http_status(status))
        self.status = status
        self.error_type = error_type
        self.detail = detail
        self.body = dict(body)


@dataclass(slots=True)
class SseEvent:
    event: str = "message"
    id: str | None = None
    data_lines: list[str] = field(default_factory=list)

    @property
    def data(self) -> str:
        return "\n".join(self.data_lines)


def _error_from(response: httpx.Response) -> ApiError:
    try:
        body = response.json()
    except ValueError:
        body = {}
    if not isinstance(body, dict):
        body = {}
    error_type = str(body.get("error") or response.reason_phrase or "Error")
    detail = str(body.get("detail") or response.text[:200] or "request failed")
    for name, message in (body.get("fields") or {}).items():
        detail += f"\n  {name}: {message}"
    if body.get("raw"):
        # Slurm's own words, under the plain sentence.
        detail += "\n  Slurm said: " + str(body["raw"]).strip().replace("\n", "\n    ")
    return ApiError(response.status_code, error_type, detail, body)


def parse_sse(lines: Iterator[str]) -> Iterator[SseEvent]:
    """Server-sent events from a stream of lines (the text/event-stream format)."""
    current = SseEvent()
    for line in lines:
        if not line:
            if current.data_lines or current.id is not None:
                yield current
            current = SseEvent()
            continue
        name, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if name == "data":
            current.data_lines.append(value)
        elif name == "event":
            current.event = value
        elif name == "id":
            current.id = value


class PortalClient:
    def __init__(
        self,
        config: ClientConfig,
        *,
        transport: httpx.BaseTransport | None = None,
        timeout: float = DEFAULT_TIMEOUT,
    ) -> None:
        self._http = httpx.Client(
            base_url=config.url + API_PREFIX,
            headers={
                "Authorization": f"Bearer {config.token}",
                "Accept": "application/json",
                # The portal's audit trail tells CLI actions from other API clients by this.
                "User-Agent": USER_AGENT,
            },
            transport=transport,
            timeout=timeout,
        )
        self.base_url = config.url

    def close(self) -> None:
        self._http.close()

    def request(self, method: str, path: str, **kwargs: Any) -> Any:
        try:
            response = self._http.request(method, path, **kwargs)
        except httpx.TransportError as error:
            raise CliError(
                f"cannot reach the portal at {self.base_url}: {error}", ExitCode.UNREACHABLE
            ) from error
        if response.is_error:
            raise _error_from(response)
        return response.json() if response.content else None

    def get(self, path: str, params: Mapping[str, Any] | None = None) -> Any:
        clean = {key: value for key, value in (params or {}).items() if value is not None}
        return self.request("GET", path, params=clean)

    def post(self, path: str, body: Any = None, headers: Mapping[str, str] | None = None) -> Any:
        return self.request("POST", path, json=body, headers=dict(headers or {}))

    def events(self, path: str, last_event_id: str | None = None) -> Iterator[SseEvent]:
        """Read one server-sent event stream until the server ends it."""
        headers = {"Accept": "text/event-stream"}
        if last_event_id is not None:
            headers["Last-Event-ID"] = last_event_id
        try:
            with self._http.stream("GET", path, headers=headers, timeout=None) as response:
                if response.is_error:
                    response.read()
                    raise _error_from(response)
                yield from parse_sse(response.iter_lines())
        except httpx.TransportError as error:
            message = f"lost the connection to {self.base_url}: {error}"
            raise CliError(message, ExitCode.UNREACHABLE) from error
