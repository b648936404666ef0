"""Typed settings from the environment (prefix ``PORTAL_``) and the per-cluster configuration.

Problems are collected and reported as one readable line each, so an operator sees every
mistake at once instead of a traceback for the first one.
"""

from __future__ import annotations

import difflib
import os
import tomllib
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Literal

from pydantic import Field, SecretStr, ValidationError, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from app.scheduler.config import ClusterConfig, ClusterConfigError, load_clusters

DEFAULT_DATABASE_URL = "sqlite+aiosqlite:///./var/portal.db"
# Deliberately public: good enough for a laptop, refused when PORTAL_ENV=prod.
DEV_SECRET_KEY = "dev-only-insecure-secret-key-change-me"  # noqa: S105
MIN_SECRET_LENGTH = 32
_PLACEHOLDER_SECRETS = frozenset(
    {"", "changeme", "change-me", "change_me", "secret", "password", "replace-me", "xxx"}
)


class ConfigError(SystemExit):
    """The configuration cannot be used; carries one human-readable line per problem.

    A SystemExit so that start-up ends with the message and exit status 1 rather than a
    traceback, whoever the caller is (uvicorn's factory loader, the poller, the CLI).
    """

    def __init__(self, problems: list[str]) -> None:
        self.problems = problems
        super().__init__("configuration error:\n" + "\n".join(f"  {p}" for p in problems))


# The test suite's own variables share the prefix.
_OTHER_PREFIXES = ("PORTAL_TEST_",)


def unknown_variables(
    environ: Mapping[str, str], models: Iterable[type[BaseSettings]]
) -> list[str]:
    """One line per PORTAL_ variable no settings model reads, with the closest known name.

    The models ignore unknown names (several share the prefix), so without this a misspelt
    PORTAL_SECURE_COOKIE would silently leave cookies without the Secure flag.
    """
    known = {f"PORTAL_{name.upper()}" for model in models for name in model.model_fields}
    problems = []
    for name in sorted(environ):
        if not name.startswith("PORTAL_") or name.startswith(_OTHER_PREFIXES):
            continue
        if name in known:
            continue
        # Compared without the shared prefix, which would make every name look alike.
        bare = sorted(known_name.removeprefix("PORTAL_") for known_name in known)
        guess = difflib.get_close_matches(name.removeprefix("PORTAL_"), bare, n=1, cutoff=0.75)
        hint = f"; did you mean PORTAL_{guess[0]}?" if guess else ""
        problems.append(f"{name}: not a setting of the portal, so it is ignored{hint}")
    return problems


def available_cpus() -> int:
    """The CPUs this process may run on (its affinity: a container's cpuset, taskset)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


def is_placeholder_secret(value: str) -> bool:
    normalised = value.strip().lower()
    if normalised in _PLACEHOLDER_SECRETS or value == DEV_SECRET_KEY:
        return True
    return any(marker in normalised for marker in ("changeme", "change-me", "change_me"))


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="PORTAL_", extra="ignore")

    env: Literal["dev", "prod"] = "dev"
    database_url: str = DEFAULT_DATABASE_URL
    secret_key: SecretStr = SecretStr(DEV_SECRET_KEY)
    clusters_file: Path | None = None
    # A folder of interactive app definitions (*.toml) added to the shipped ones.
    apps_dir: Path | None = None
    poll_interval: float = Field(default=10.0, gt=0)
    # Seconds between polls for half a minute after a submission through the portal, so its
    # page follows a short job (ADR 0022); 0, or not below poll_interval, turns it off.
    poll_fresh_interval: float = Field(default=2.0, ge=0)
    # The longest wait between two polls of a cluster that keeps failing (back-off ceiling).
    poll_backoff_max: float = Field(default=60.0, gt=0)
    # How old a row still "submitting" must be before the poller looks for it by UUID; longer
    # than the SSH command timeout (30 s), so a slow sbatch is never declared lost (ADR 0002).
    submit_grace: float = Field(default=60.0, gt=0)
    # Seconds between usage ingestions run by the poller (one sacct each); 0 turns them off.
    usage_ingest_interval: float = Field(default=300.0, ge=0)
    # Poll cycles between two partition reports (one sinfo each).
    partitions_every: int = Field(default=6, ge=1)
    # Poll cycles between two reads of the maintenance reservations (one scontrol each).
    reservations_every: int = Field(default=6, ge=1)
    # Poll cycles between two reads of the nodes (one scontrol each) for the nodes view.
    nodes_every: int = Field(default=3, ge=1)
    # An interactive session idle this many seconds is ended as its owner's End would (an
    # app's definition may set its own limit); 0 turns the site's limit off.
    idle_limit: float = Field(default=0.0, ge=0)
    # Seconds before that end when the owner is warned (at once, if the limit is shorter).
    idle_warning: float = Field(default=900.0, ge=0)
    # Poll cycles between two idle checks of a cluster's running sessions, and the most
    # sessions asked per check (one HTTP request to each one's server).
    idle_every: int = Field(default=3, ge=1)
    idle_batch: int = Field(default=5, ge=1, le=100)
    # PostgreSQL connections per process: kept open, and extra ones opened under load.
    db_pool_size: int = Field(default=10, ge=1)
    db_max_overflow: int = Field(default=20, ge=0)
    # Web worker processes `python -m app.serve` starts (uvicorn --workers); None means one
    # per CPU this process may run on. Every piece of state they share lives in the database
    # (ADR 0029), and the in-process poller runs in each, polling a cluster only while it
    # holds that cluster's lease.
    web_workers: int | None = Field(default=None, ge=1, le=64)
    # None means "decide from env": on in development, off in production.
    run_poller_in_web: bool | None = None
    # `python -m app.poller` serves /metrics here when set (it has no web app of its own).
    poller_metrics_port: int | None = Field(default=None, ge=0, le=65535)
    poller_metrics_host: str = "127.0.0.1"
    # Notifications, sent by the active poller. No SMTP host: e-mail rules cannot be made.
    smtp_host: str = ""
    smtp_port: int = Field(default=25, ge=1, le=65535)
    # starttls: upgrade a plain connection (refused if the server cannot); tls: TLS from
    # the first byte (usually port 465); none: plain text, for a relay on the same host.
    smtp_security: Literal["starttls", "tls", "none"] = "starttls"
    smtp_username: str = ""
    smtp_password: SecretStr = SecretStr("")
    smtp_from: str = "hpc-portal@localhost"
    # Webhooks to private, loopback and link-local addresses (off: the portal must not be a
    # way into the site's own network).
    webhook_allow_private: bool = False
    # Sign-in through an OpenID Connect provider (ADR 0028): off while the issuer is empty.
    oidc_issuer: str = ""
    oidc_client_id: str = ""
    oidc_client_secret: SecretStr = SecretStr("")
    # The button's words: "Sign in with <name>".
    oidc_provider_name: str = "single sign-on"
    oidc_scopes: str = "openid profile email"
    # The ID token claim that is the portal login (found, or created when allowed).
    oidc_username_claim: str = "preferred_username"
    oidc_create_users: bool = True
    # Seconds a token's times may be off the portal's clock; seconds before a call gives up.
    oidc_clock_skew: int = Field(default=60, ge=0, le=600)
    oidc_timeout: float = Field(default=10.0, gt=0, le=120)
    # Off: the sign-in page shows only the provider's button and refuses passwords.
    password_signin: bool = True
    # A shell on each cluster's login node in the browser, as the user (ADR 0026): off takes
    # the page and its link away and refuses the shell's WebSocket.
    shell_enabled: bool = True
    # Seconds a shell may go without input before the portal ends it.
    shell_idle_timeout: float = Field(default=1800.0, gt=0)
    # Shells one user may have open at once (in all web processes); each holds one of the
    # user's SSH sessions on the login node (the cluster's ssh_max_sessions, 10 by default).
    shell_max_per_user: int = Field(default=3, ge=1)

    @model_validator(mode="after")
    def _check_single_sign_on(self) -> Settings:
        problems = oidc_problems(self)
        if problems:
            raise ValueError("; ".join(problems))
        return self

    @field_validator("web_workers", mode="before")
    @classmethod
    def _blank_means_one_per_cpu(cls, value: object) -> object:
        # docker-compose passes the variable through empty when the operator did not set it.
        return None if isinstance(value, str) and not value.strip() else value

    @model_validator(mode="after")
    def _refuse_unsafe_production(self) -> Settings:
        if self.env != "prod":
            return self
        secret = self.secret_key.get_secret_value()
        if is_placeholder_secret(secret):
            raise ValueError("PORTAL_SECRET_KEY is empty or a placeholder; set a random secret")
        if len(secret) < MIN_SECRET_LENGTH:
            raise ValueError(f"PORTAL_SECRET_KEY must be at least {MIN_SECRET_LENGTH} characters")
        return self

    @property
    def is_production(self) -> bool:
        return self.env == "prod"

    @property
    def is_oidc_enabled(self) -> bool:
        return bool(self.oidc_issuer)

    @property
    def web_worker_count(self) -> int:
        return self.web_workers or available_cpus()

    @property
    def should_run_poller_in_web(self) -> bool:
        if self.run_poller_in_web is None:
            return not self.is_production
        return self.run_poller_in_web


def oidc_problems(settings: Settings) -> list[str]:
    """What stops single sign-on from working as configured, one line each."""
    problems = []
    issuer = settings.oidc_issuer
    if issuer and not settings.oidc_client_id:
        problems.append("PORTAL_OIDC_CLIENT_ID is required with PORTAL_OIDC_ISSUER")
    if issuer and not issuer.startswith(("https://", "http://")):
        problems.append("PORTAL_OIDC_ISSUER must be an http(s) address")
    if settings.is_production and issuer and not issuer.startswith("https://"):
        problems.append("PORTAL_OIDC_ISSUER must use https in production")
    if issuer and "openid" not in settings.oidc_scopes.split():
        problems.append("PORTAL_OIDC_SCOPES must include openid")
    if not settings.password_signin and not issuer:
        problems.append(
            "PORTAL_PASSWORD_SIGNIN=false needs PORTAL_OIDC_ISSUER: nobody could sign in"
        )
    return problems


def describe_validation_error(error: ValidationError) -> list[str]:
    problems = []
    for item in error.errors():
        field = ".".join(str(part) for part in item["loc"])
        message = str(item["msg"]).removeprefix("Value error, ")
        problems.append(f"PORTAL_{field.upper()}: {message}" if field else message)
    return problems


def load_settings() -> Settings:
    """Settings from the environment, or a ConfigError listing every problem."""
    try:
        return Settings()
    except ValidationError as error:
        raise ConfigError(describe_validation_error(error)) from None


def _file_problem(path_text: str) -> str | None:
    path = Path(path_text)
    if not path.is_file():
        return f"file {path_text} does not exist"
    if not os.access(path, os.R_OK):
        return f"file {path_text} is not readable"
    return None


def _cluster_problems(cluster: ClusterConfig, *, is_production: bool) -> list[str]:
    problems = []
    files = {
        "service_key": cluster.service_key,
        "user_ca_key": cluster.user_ca_key,
        "known_hosts": cluster.known_hosts,
        "jwt_key": cluster.jwt_key,
    }
    for key, path_text in files.items():
        problem = _file_problem(path_text) if path_text else None
        if problem:
            problems.append(f"cluster {cluster.name!r}: {key}: {problem}")
    if cluster.rest_url and not cluster.jwt_key:
        problems.append(f"cluster {cluster.name!r}: jwt_key: required when rest_url is set")
    if is_production and not cluster.is_host_key_checked:
        problems.append(
            f"cluster {cluster.name!r}: known_hosts: empty (no host key checks) is dev-only"
        )
    return problems


def _read_clusters(path: Path) -> dict[str, ClusterConfig]:
    if not path.is_file():
        raise ConfigError([f"PORTAL_CLUSTERS_FILE: {path} does not exist"])
    try:
        return load_clusters(path)
    except tomllib.TOMLDecodeError as error:
        raise ConfigError([f"{path}: not valid TOML: {error}"]) from None
    except (ClusterConfigError, OSError, ValueError, TypeError) as error:
        raise ConfigError([f"{path}: {error}"]) from None


def load_cluster_configs(settings: Settings) -> dict[str, ClusterConfig]:
    """The clusters named in ``settings.clusters_file``, checked; none if no file is set."""
    if settings.clusters_file is None:
        return {}
    clusters = _read_clusters(settings.clusters_file)
    problems = [
        f"{settings.clusters_file}: {problem}"
        for cluster in clusters.values()
        for problem in _cluster_problems(cluster, is_production=settings.is_production)
    ]
    if problems:
        raise ConfigError(problems)
    return clusters
