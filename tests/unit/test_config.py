"""Settings from the environment and validation of the clusters file."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.config import (
    DEV_SECRET_KEY,
    ConfigError,
    Settings,
    load_cluster_configs,
    load_settings,
    unknown_variables,
)
from app.main import create_app
from app.web.settings import WebSettings

STRONG_SECRET = "k3Jx9QpT2vLm8ZrW5yHc7NbF4dGs6AeU"


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    for name in ("ENV", "DATABASE_URL", "SECRET_KEY", "CLUSTERS_FILE", "POLL_INTERVAL"):
        monkeypatch.delenv(f"PORTAL_{name}", raising=False)
    monkeypatch.delenv("PORTAL_RUN_POLLER_IN_WEB", raising=False)
    return monkeypatch


@pytest.fixture
def key_files(tmp_path: Path) -> dict[str, Path]:
    files = {}
    for name in ("user_ca", "hpcsvc_ed25519", "known_hosts", "jwt_hs256.key"):
        path = tmp_path / name
        path.write_text("key material\n")
        files[name] = path
    return files


def write_clusters(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "clusters.toml"
    path.write_text(body)
    return path


def ssh_cluster(files: dict[str, Path], **overrides: str) -> str:
    values = {
        "transport": "ssh",
        "login_host": "127.0.0.1",
        "known_hosts": str(files["known_hosts"]),
        "user_ca_key": str(files["user_ca"]),
        "service_user": "hpcsvc",
        "service_key": str(files["hpcsvc_ed25519"]),
        **overrides,
    }
    lines = [f'{key} = "{value}"' for key, value in values.items()]
    return "[clusters.testcluster]\nlogin_port = 2222\n" + "\n".join(lines) + "\n"


def test_development_defaults_need_no_environment(clean_env: pytest.MonkeyPatch) -> None:
    settings = load_settings()

    assert settings.env == "dev"
    assert settings.database_url == "sqlite+aiosqlite:///./var/portal.db"
    assert settings.secret_key.get_secret_value() == DEV_SECRET_KEY
    assert settings.poll_interval == 10
    assert settings.should_run_poller_in_web is True


def test_settings_are_read_from_portal_prefixed_variables(clean_env: pytest.MonkeyPatch) -> None:
    clean_env.setenv("PORTAL_DATABASE_URL", "postgresql+psycopg://db/portal")
    clean_env.setenv("PORTAL_POLL_INTERVAL", "2.5")
    clean_env.setenv("PORTAL_RUN_POLLER_IN_WEB", "false")

    settings = load_settings()

    assert settings.database_url == "postgresql+psycopg://db/portal"
    assert settings.poll_interval == 2.5
    assert settings.should_run_poller_in_web is False


def test_production_refuses_the_development_secret(clean_env: pytest.MonkeyPatch) -> None:
    clean_env.setenv("PORTAL_ENV", "prod")

    with pytest.raises(ConfigError) as raised:
        load_settings()

    assert raised.value.problems == [
        "PORTAL_SECRET_KEY is empty or a placeholder; set a random secret"
    ]


@pytest.mark.parametrize("secret", ["", "changeme", "CHANGE-ME-please-0123456789abcdefgh"])
def test_production_refuses_empty_and_placeholder_secrets(
    clean_env: pytest.MonkeyPatch, secret: str
) -> None:
    clean_env.setenv("PORTAL_ENV", "prod")
    clean_env.setenv("PORTAL_SECRET_KEY", secret)

    with pytest.raises(ConfigError, match="PORTAL_SECRET_KEY"):
        load_settings()


def test_production_refuses_a_short_secret(clean_env: pytest.MonkeyPatch) -> None:
    clean_env.setenv("PORTAL_ENV", "prod")
    clean_env.setenv("PORTAL_SECRET_KEY", "k3Jx9QpT2vLm")

    with pytest.raises(ConfigError, match="at least 32 characters"):
        load_settings()


def test_production_accepts_a_strong_secret_and_keeps_the_poller_out_of_web(
    clean_env: pytest.MonkeyPatch,
) -> None:
    clean_env.setenv("PORTAL_ENV", "prod")
    clean_env.setenv("PORTAL_SECRET_KEY", STRONG_SECRET)

    settings = load_settings()

    assert settings.is_production
    assert settings.should_run_poller_in_web is False


def test_invalid_values_are_reported_one_line_each_by_variable(
    clean_env: pytest.MonkeyPatch,
) -> None:
    clean_env.setenv("PORTAL_ENV", "staging")
    clean_env.setenv("PORTAL_POLL_INTERVAL", "0")

    with pytest.raises(ConfigError) as raised:
        load_settings()

    problems = raised.value.problems
    assert len(problems) == 2
    assert problems[0].startswith("PORTAL_ENV: ")
    assert problems[1].startswith("PORTAL_POLL_INTERVAL: ")
    assert str(raised.value).splitlines()[1:] == [f"  {p}" for p in problems]


def test_no_clusters_file_means_no_clusters() -> None:
    assert load_cluster_configs(Settings(clusters_file=None)) == {}


def test_valid_clusters_file_loads_each_cluster(tmp_path: Path, key_files: dict[str, Path]) -> None:
    path = write_clusters(tmp_path, ssh_cluster(key_files))

    clusters = load_cluster_configs(Settings(clusters_file=path))

    assert list(clusters) == ["testcluster"]
    assert clusters["testcluster"].login_port == 2222
    assert clusters["testcluster"].service_user == "hpcsvc"


def test_missing_key_files_are_each_named_with_cluster_and_key(
    tmp_path: Path, key_files: dict[str, Path]
) -> None:
    key_files["user_ca"].unlink()
    key_files["hpcsvc_ed25519"].unlink()
    path = write_clusters(tmp_path, ssh_cluster(key_files))

    with pytest.raises(ConfigError) as raised:
        load_cluster_configs(Settings(clusters_file=path))

    assert raised.value.problems == [
        f"{path}: cluster 'testcluster': service_key: file {key_files['hpcsvc_ed25519']} "
        "does not exist",
        f"{path}: cluster 'testcluster': user_ca_key: file {key_files['user_ca']} does not exist",
    ]


def test_missing_required_key_names_the_cluster_and_key(
    tmp_path: Path, key_files: dict[str, Path]
) -> None:
    path = write_clusters(tmp_path, ssh_cluster(key_files, service_user=""))

    with pytest.raises(ConfigError) as raised:
        load_cluster_configs(Settings(clusters_file=path))

    (problem,) = raised.value.problems
    assert "testcluster" in problem
    assert "service_user" in problem


def test_rest_transport_needs_its_url_and_key(tmp_path: Path, key_files: dict[str, Path]) -> None:
    path = write_clusters(tmp_path, ssh_cluster(key_files, transport="rest"))

    with pytest.raises(ConfigError) as raised:
        load_cluster_configs(Settings(clusters_file=path))

    (problem,) = raised.value.problems
    assert "rest_url" in problem and "jwt_key" in problem


def test_rest_url_without_jwt_key_is_refused(tmp_path: Path, key_files: dict[str, Path]) -> None:
    path = write_clusters(tmp_path, ssh_cluster(key_files, rest_url="http://127.0.0.1:6820"))

    with pytest.raises(ConfigError) as raised:
        load_cluster_configs(Settings(clusters_file=path))

    assert raised.value.problems == [
        f"{path}: cluster 'testcluster': jwt_key: required when rest_url is set"
    ]


def test_disabled_host_key_checks_are_refused_in_production(
    tmp_path: Path, key_files: dict[str, Path]
) -> None:
    path = write_clusters(tmp_path, ssh_cluster(key_files, known_hosts=""))
    settings = Settings(env="prod", secret_key=STRONG_SECRET, clusters_file=path)

    with pytest.raises(ConfigError, match="known_hosts: empty"):
        load_cluster_configs(settings)


def test_disabled_host_key_checks_are_allowed_in_development(
    tmp_path: Path, key_files: dict[str, Path]
) -> None:
    path = write_clusters(tmp_path, ssh_cluster(key_files, known_hosts=""))

    clusters = load_cluster_configs(Settings(clusters_file=path))

    assert clusters["testcluster"].is_host_key_checked is False


def test_broken_toml_is_one_readable_line(tmp_path: Path) -> None:
    path = write_clusters(tmp_path, "[clusters.testcluster\nlogin_host = ")

    with pytest.raises(ConfigError) as raised:
        load_cluster_configs(Settings(clusters_file=path))

    (problem,) = raised.value.problems
    assert problem.startswith(f"{path}: not valid TOML")


def test_a_misspelt_variable_is_named_with_the_setting_it_resembles() -> None:
    environ = {
        "PORTAL_SECURE_COOKIE": "true",
        "PORTAL_DATABASE_URL": "sqlite+aiosqlite:///x.db",
        "PORTAL_TEST_PG_URL": "postgresql://",
        "PORTAL_WIDGETS": "3",
        "HOME": "/root",
    }

    problems = unknown_variables(environ, (Settings, WebSettings))

    assert problems == [
        "PORTAL_SECURE_COOKIE: not a setting of the portal, so it is ignored; "
        "did you mean PORTAL_SECURE_COOKIES?",
        "PORTAL_WIDGETS: not a setting of the portal, so it is ignored",
    ]


def test_production_does_not_start_with_a_misspelt_variable(
    clean_env: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    clean_env.setenv("PORTAL_SECURE_COOKIE", "true")
    settings = Settings(
        env="prod", secret_key=STRONG_SECRET, database_url=f"sqlite+aiosqlite:///{tmp_path}/p.db"
    )

    with pytest.raises(ConfigError) as raised:
        create_app(settings)

    assert raised.value.problems[0].startswith("PORTAL_SECURE_COOKIE: not a setting")


def test_a_bad_app_definition_stops_start_up_naming_its_file_and_key(
    clean_env: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    (tmp_path / "desktop.toml").write_text(
        'name = "desktop"\ntitle = "Desktop"\nscript = "#!/bin/bash\\n"\nready = "/"\n'
    )
    settings = Settings(database_url=f"sqlite+aiosqlite:///{tmp_path}/p.db", apps_dir=tmp_path)

    with pytest.raises(ConfigError) as raised:
        create_app(settings)

    assert raised.value.problems == [
        f"PORTAL_APPS_DIR: {tmp_path / 'desktop.toml'}: unknown key 'ready'"
    ]
