"""Interactive app definitions: the shipped JupyterLab, a site's own apps, refusals by name."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from app.interactive.definitions import DefinitionError, load_definitions

CODE_SERVER = """
name = "code-server"
title = "VS Code in the browser"
ready_path = "healthz"
script = '''
#!/bin/bash
exec code-server --bind-addr "0.0.0.0:$PORT" "$PORTAL_APP_WORK_DIR"
'''

[form]
cores = { default = 2, min = 1, max = 4 }

[auth]
header = "Cookie"
prefix = "code-server-session="
"""


def _write(folder: Path, name: str, text: str) -> Path:
    path = folder / f"{name}.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_the_shipped_jupyterlab_is_bash_that_reads_every_choice_from_its_environment() -> None:
    jupyter = load_definitions()["jupyterlab"]

    assert jupyter.title == "JupyterLab" and jupyter.ready_path == "api/status"
    assert (jupyter.form.cores.default, jupyter.form.gpus.max) == (1, 0)
    assert (jupyter.auth.header, jupyter.auth.prefix) == ("Authorization", "token ")
    subprocess.run(["bash", "-n"], input=jupyter.script, text=True, check=True)
    for name in ("BASE_URL", "CONNECTION", "WORK_DIR", "MODULES", "VENV"):
        assert f"PORTAL_APP_{name}" in jupyter.script
    # The secret never reaches a command line other users of the node can read.
    assert "JUPYTER_TOKEN" in jupyter.script and "--IdentityProvider.token" not in jupyter.script


def test_a_site_adds_an_app_and_replaces_a_shipped_one(tmp_path: Path) -> None:
    _write(tmp_path, "code-server", CODE_SERVER)
    replaced = load_definitions()["jupyterlab"].model_dump()
    replaced["title"] = "JupyterLab (site build)"
    lines = ['name = "jupyterlab"', 'title = "JupyterLab (site build)"']
    lines.append("script = '''\n" + replaced["script"] + "'''")
    _write(tmp_path, "jupyterlab", "\n".join(lines) + "\n")

    apps = load_definitions(tmp_path)

    assert apps["code-server"].auth.prefix == "code-server-session="
    assert apps["code-server"].form.cores.max == 4 and apps["code-server"].form.gpus.max == 0
    assert apps["jupyterlab"].title == "JupyterLab (site build)"


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        (CODE_SERVER.replace("ready_path", "ready_pth"), "unknown key 'ready_pth'"),
        (CODE_SERVER.replace("max = 4", "max = 4, maxx = 8"), "unknown key 'form.cores.maxx'"),
        (CODE_SERVER.replace("default = 2", "default = 9"), "form.cores: needs min <= default"),
        (CODE_SERVER.replace("#!/bin/bash\n", ""), "script must start with #!"),
        (CODE_SERVER.replace('name = "code-server"\n', ""), "missing name"),
        (CODE_SERVER.replace('"code-server"', '"Code Server"', 1), "name: String should match"),
        (CODE_SERVER.replace('header = "Cookie"', 'header = "X Bad"'), "auth.header"),
        ("name = [", "not valid TOML"),
    ],
)
def test_a_bad_definition_is_refused_naming_the_file_and_the_key(
    tmp_path: Path, text: str, problem: str
) -> None:
    path = _write(tmp_path, "code-server", text)

    with pytest.raises(DefinitionError) as refused:
        load_definitions(tmp_path)

    assert str(refused.value).startswith(f"{path}: ")
    assert problem in str(refused.value)


def test_a_definitions_name_is_its_files_name(tmp_path: Path) -> None:
    _write(tmp_path, "vscode", CODE_SERVER)

    with pytest.raises(DefinitionError, match="differs from the file's name"):
        load_definitions(tmp_path)


def test_a_missing_site_folder_is_named(tmp_path: Path) -> None:
    with pytest.raises(DefinitionError, match="not a directory"):
        load_definitions(tmp_path / "apps")


def test_the_shipped_desktop_is_a_vnc_app_whose_script_cleans_up_after_itself() -> None:
    apps = load_definitions()
    desktop = apps["desktop"]

    assert (desktop.kind, desktop.open_path) == ("vnc", "")
    assert (apps["jupyterlab"].kind, apps["jupyterlab"].open_path) == ("http", "lab")
    subprocess.run(["bash", "-n"], input=desktop.script, text=True, check=True)
    for needed in ("-localhost yes", "tigervncpasswd -f", "dbus-launch --exit-with-session",
                   "websockify", "PR_SET_CHILD_SUBREAPER", "trap cleanup EXIT"):  # fmt: skip
        assert needed in desktop.script
    # The password reaches Xvnc in a file, and the secret only bash's own printf (a builtin,
    # so no command line other users of the node can read).
    assert "-PasswordFile" in desktop.script
    uses = [line.strip() for line in desktop.script.splitlines() if "$secret" in line]
    assert all(line.startswith("printf ") for line in uses), uses


def test_an_unknown_kind_is_refused_by_name(tmp_path: Path) -> None:
    _write(tmp_path, "odd", CODE_SERVER.replace('"code-server"', '"odd"') + 'kind = "rdp"\n')
    with pytest.raises(DefinitionError, match="kind"):
        load_definitions(tmp_path)
