"""Interactive app definitions: what the launch form asks and the job that starts the server.

A definition is one TOML file. The portal ships ``apps/*.toml`` (JupyterLab first); a site
adds or replaces apps with files of its own (``PORTAL_APPS_DIR``), in the same format, with
no code change: RStudio Server, code-server or a VNC desktop differ only in their script,
their readiness path and how the secret is presented.

The script never has a typed value written into it. Everything chosen in the form reaches it
as an environment variable, so a value can never change the script's syntax:

``PORTAL_APP_BASE_URL``    the path the portal serves the app under, ``/apps/sessions/ID/``
``PORTAL_APP_CONNECTION``  the file the script writes ``{"port": N, "secret": "..."}`` to
``PORTAL_APP_WORK_DIR``    the working directory chosen in the form
``PORTAL_APP_MODULES``     environment modules to load, separated by spaces (may be empty)
``PORTAL_APP_VENV``        a virtualenv to activate (may be empty)

Its ``[idle]`` table says how the portal tells that a session is idle and how long it may
stay so before it is ended (app/interactive/idle.py).

``kind`` says what the server speaks: ``http`` (the default: the proxy relays HTTP and
WebSocket to it, as for JupyterLab) or ``vnc`` (a remote desktop: the server is websockify in
front of a VNC server whose password is the secret; the portal serves noVNC itself and bridges
the VNC stream, ADR 0027). ``open_path`` is where Connect opens, relative to the base URL.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from app.config import ConfigError, Settings
from app.interactive.idle import Idle
from app.scheduler.config import file_problems

SHIPPED_DIR = Path(__file__).resolve().parent / "apps"
NAME = re.compile(r"^[a-z][a-z0-9-]{0,31}$")


class DefinitionError(ValueError):
    """A definition file cannot be used; the message names the file and the key."""


class Strict(BaseModel):
    # Unknown keys are refused by name: a misspelt limit must not silently become no limit.
    model_config = ConfigDict(extra="forbid", frozen=True)


class Number(Strict):
    default: int
    min: int = Field(default=0, ge=0)
    max: int

    @model_validator(mode="after")
    def _ordered(self) -> Number:
        if not self.min <= self.default <= self.max:
            raise ValueError("needs min <= default <= max")
        return self


class Text(Strict):
    default: str = ""


class Form(Strict):
    """The launch form; a number whose max is 0 is not asked (e.g. GPUs for JupyterLab)."""

    cores: Number = Number(default=1, min=1, max=8)
    memory_gb: Number = Number(default=4, min=1, max=64)
    time_minutes: Number = Number(default=60, min=5, max=480)
    gpus: Number = Number(default=0, min=0, max=0)
    modules: Text = Text()
    venv: Text = Text()


class Auth(Strict):
    """How the proxy presents the session's secret to the app, e.g. ``Authorization: token S``."""

    header: str = Field(default="Authorization", pattern=r"^[A-Za-z][A-Za-z0-9-]*$")
    prefix: str = "token "


class AppDefinition(Strict):
    name: str = Field(pattern=NAME.pattern)
    title: str = Field(min_length=1, max_length=80)
    description: str = Field(default="", max_length=500)
    script: str = Field(min_length=1)
    # Relative to the base URL; answers 2xx (with the secret) once the server is ready.
    ready_path: str = Field(default="", pattern=r"^[A-Za-z0-9._~/-]*$")
    kind: Literal["http", "vnc"] = "http"
    # Relative to the base URL: the page Connect opens (JupyterLab's "lab").
    open_path: str = Field(default="", pattern=r"^[A-Za-z0-9._~/-]*$")
    form: Form = Form()
    auth: Auth = Auth()
    idle: Idle = Idle()

    @model_validator(mode="after")
    def _script_is_bash(self) -> AppDefinition:
        if not self.script.startswith("#!"):
            raise ValueError("script must start with #! (it is sent to sbatch as it is)")
        return self


def definition_from_mapping(path: Path, raw: Mapping[str, Any]) -> AppDefinition:
    try:
        definition = AppDefinition.model_validate(dict(raw))
    except ValidationError as error:
        raise DefinitionError(f"{path}: {file_problems(error)}") from None
    if definition.name != path.stem:
        raise DefinitionError(f"{path}: name {definition.name!r} differs from the file's name")
    return definition


def load_definition(path: Path) -> AppDefinition:
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as error:
        raise DefinitionError(f"{path}: not valid TOML: {error}") from None
    # TOML's ''' strings keep the newline after the opening quotes; the shebang must lead.
    if isinstance(raw.get("script"), str):
        raw["script"] = raw["script"].lstrip("\n")
    return definition_from_mapping(path, raw)


def load_definitions(site_dir: Path | None = None) -> dict[str, AppDefinition]:
    """The shipped apps, then the site's: a site file of the same name replaces the shipped one."""
    folders = [SHIPPED_DIR, *([site_dir] if site_dir is not None else [])]
    if site_dir is not None and not site_dir.is_dir():
        raise DefinitionError(f"{site_dir}: not a directory")
    definitions: dict[str, AppDefinition] = {}
    for folder in folders:
        for path in sorted(folder.glob("*.toml")):
            definition = load_definition(path)
            definitions[definition.name] = definition
    return definitions


def load_app_definitions(settings: Settings) -> dict[str, AppDefinition]:
    """The interactive apps: the shipped ones and those of ``settings.apps_dir``, checked."""
    try:
        return load_definitions(settings.apps_dir)
    except DefinitionError as error:
        raise ConfigError([f"PORTAL_APPS_DIR: {error}"]) from None
