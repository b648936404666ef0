"""slurmrestd transport: keep-alive httpx client, per-user JWTs, version discovery.

slurmrestd in 22.05 reports authentication failures as HTTP 500 and puts details in
``errors[]`` even on 200, so every response goes through ``read_response``.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import httpx
import jwt

from app.scheduler.config import ClusterConfig
from app.scheduler.errors import (
    PermissionDenied,
    SchedulerError,
    SchedulerTimeout,
    SchedulerUnavailable,
    classify_control_error,
    classify_rest_errors,
    rest_error_texts,
)
from app.scheduler.slurm.commands import check_user
from app.scheduler.slurm.rest_versions import choose_version

log = logging.getLogger(__name__)


class RestTokens:
    """Mints HS256 tokens (``sun`` = user name) and caches them until near expiry."""

    def __init__(self, config: ClusterConfig, *, lifetime: int = 300) -> None:
        self._config = config
        self._lifetime = lifetime
        self._key: bytes | None = None
        # Per process: any worker's token is as valid as another's, so nothing to share.
        self._cache: dict[str, tuple[float, str]] = {}

    def token_for(self, user: str) -> str:
        """A token acting as ``user``; refuses root and the Slurm user (they act for anyone)."""
        check_user(user)
        if user in self._config.forbidden_users:
            raise PermissionDenied(f"refusing to mint a token for {user!r}")
        now = time.time()
        cached = self._cache.get(user)
        if cached is not None and cached[0] - 30 > now:
            return cached[1]
        if self._key is None:
            self._key = Path(self._config.jwt_key).read_bytes()
        expires = now + self._lifetime
        claims = {"sun": user, "iat": int(now), "exp": int(expires)}
        token = jwt.encode(claims, self._key, algorithm="HS256")
        self._cache[user] = (expires, token)
        return token


class RestTransport:
    """Sends requests to slurmrestd as a given user (or the service user)."""

    def __init__(
        self,
        config: ClusterConfig,
        *,
        timeout: float = 30.0,
        client: httpx.AsyncClient | None = None,
        version: str | None = None,
    ) -> None:
        self.config = config
        self.tokens = RestTokens(config)
        self._client = client or httpx.AsyncClient(base_url=config.rest_url, timeout=timeout)
        # None: discovered on first use; an API version here is spoken without asking.
        self._version: str | None = version

    async def version(self) -> str:
        """The newest API version both slurmrestd and this library speak.

        slurmrestd 23.11+ answers ``/openapi/v3`` only with credentials and lists its paths
        with a trailing slash; 22.05 lists them without.
        """
        if self._version is None:
            spec = await self._send("GET", "/openapi/v3", None)
            chosen, offered = choose_version(spec.get("paths", {}))
            if chosen is None:
                raise SchedulerUnavailable(f"no supported slurmrestd API (offers {offered})")
            self._version = chosen
        return self._version

    async def call(
        self,
        method: str,
        endpoint: str,
        *,
        as_user: str | None = None,
        body: Mapping[str, Any] | None = None,
        params: Mapping[str, str] | None = None,
        db: bool = False,
    ) -> dict[str, Any]:
        """Call ``/slurm[db]/<version>/<endpoint>`` and return the decoded JSON body."""
        version = await self.version()
        prefix = "slurmdb" if db else "slurm"
        return await self._send(
            method, f"/{prefix}/{version}/{endpoint}", as_user, body=body, params=params
        )

    async def _send(
        self,
        method: str,
        path: str,
        as_user: str | None,
        *,
        body: Mapping[str, Any] | None = None,
        params: Mapping[str, str] | None = None,
    ) -> dict[str, Any]:
        if as_user is not None and as_user in self.config.reserved_users:
            raise PermissionDenied(f"refusing to act as {as_user!r} for a user")
        user = as_user or self.config.service_user
        headers = {"X-SLURM-USER-NAME": user, "X-SLURM-USER-TOKEN": self.tokens.token_for(user)}
        try:
            response = await self._client.request(
                method, path, headers=headers, json=body, params=params
            )
        except httpx.TimeoutException as exc:
            raise SchedulerTimeout(f"slurmrestd did not answer {path}") from exc
        except httpx.HTTPError as exc:
            raise SchedulerUnavailable(f"cannot reach slurmrestd: {exc}") from exc
        return read_response(response)

    async def close(self) -> None:
        """Close the HTTP client and its keep-alive connections."""
        await self._client.aclose()


class RestRequestFailed(SchedulerError):
    """slurmrestd answered with errors; ``errors`` holds its ``errors[]`` entries."""

    def __init__(
        self,
        status: int,
        errors: Sequence[Mapping[str, Any]],
        payload: Mapping[str, Any] | None = None,
    ) -> None:
        self.status = status
        self.errors = errors
        self.payload = payload or {}
        texts = rest_error_texts(errors)
        super().__init__("; ".join(texts) or f"slurmrestd returned HTTP {status}")

    @property
    def is_auth_failure(self) -> bool:
        """401 without credentials; 511 (error 1007) for a token of another user."""
        return self.status in _AUTH_FAILURES

    def as_submit_error(self) -> SchedulerError:
        """The SubmitRejected this failure means for a job submission."""
        if self.is_auth_failure:
            return PermissionDenied(f"slurmrestd refused the credentials: {self}")
        return classify_rest_errors(self.errors)

    def as_control_error(self) -> SchedulerError:
        """The typed error this failure means for cancel/hold/release."""
        if self.is_auth_failure:
            return PermissionDenied(f"slurmrestd refused the credentials: {self}")
        return classify_control_error("\n".join(rest_error_texts(self.errors)) or str(self))


_AUTH_FAILURES = frozenset({401, 403, 511})


def warning_texts(payload: Mapping[str, Any]) -> list[str]:
    """Slurm's warnings in a response (``warnings[]``), as texts."""
    items = [w for w in payload.get("warnings") or [] if isinstance(w, dict)]
    return rest_error_texts(items)


def status_errors(payload: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Failures reported per job inside a 200 answer (``status[]`` of DELETE, v0.0.42+).

    Each entry reads ``{"error": {"code", "string", "message"}, "job_id": …}``; a code other
    than 0 is a failure, turned into the ``errors[]`` shape the classifiers read.
    """
    failed = []
    for item in payload.get("status") or []:
        error = item.get("error") if isinstance(item, dict) else None
        if not isinstance(error, dict) or not error.get("code"):
            continue
        text = error.get("message") or error.get("string") or f"error {error['code']}"
        failed.append({"error": str(text), "error_number": error["code"]})
    return failed


def read_response(response: httpx.Response) -> dict[str, Any]:
    """The decoded body of a successful answer; RestRequestFailed for any failure in it."""
    try:
        payload = response.json()
    except ValueError:
        payload = None
    if not isinstance(payload, dict):
        if response.status_code == 401:
            raise RestRequestFailed(401, [{"error": "Authentication failure"}])
        raise SchedulerUnavailable(f"slurmrestd returned HTTP {response.status_code}")
    errors = [e for e in payload.get("errors", []) if isinstance(e, dict)]
    errors += status_errors(payload)
    # Slurm accepted the request but said something about it (an ignored field, a deprecated
    # option): kept in the log with the request it belongs to. A read's warnings ("Zero jobs
    # to dump", "No job changes since …") come every poll cycle and ask nothing of anyone.
    level = logging.DEBUG if response.request.method == "GET" else logging.WARNING
    for text in warning_texts(payload):
        log.log(
            level,
            "slurmrestd warning for %s %s: %s",
            response.request.method,
            response.request.url.path,
            text,
        )
    if response.status_code >= 400 or errors:
        raise RestRequestFailed(response.status_code, errors, payload)
    return payload
