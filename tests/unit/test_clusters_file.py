"""Attack by accident: a typo in the clusters file must not turn a check off silently."""

from pathlib import Path

import pytest

from app.config import ConfigError, Settings, load_cluster_configs
from app.scheduler.config import ClusterConfigError, load_clusters

GOOD = """
[clusters.one]
transport = "ssh"
login_host = "login.example.org"
known_hosts = "/etc/hpcportal/known_hosts"
user_ca_key = "/k/ca"
service_user = "hpcportal"
service_key = "/k/svc"
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "clusters.toml"
    path.write_text(text)
    return path


def test_a_misspelt_known_hosts_is_refused_by_name(tmp_path: Path) -> None:
    path = write(tmp_path, GOOD.replace("known_hosts", "knwon_hosts"))
    with pytest.raises(ClusterConfigError, match="unknown key 'knwon_hosts'"):
        load_clusters(path)


def test_the_portal_does_not_start_with_an_unknown_key(tmp_path: Path) -> None:
    path = write(tmp_path, GOOD + 'log_root = ["/home"]\n')
    settings = Settings(env="dev", clusters_file=path, run_poller_in_web=False)
    with pytest.raises(ConfigError, match="unknown key 'log_root'"):
        load_cluster_configs(settings)


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("login_port = 70000", "login_port"),
        ('login_port = "ssh"', "login_port"),
        ('log_roots = "/home"', "log_roots"),
        ("[unrelated]\nx = 1", "unknown top-level key"),
    ],
)
def test_wrong_types_are_refused(tmp_path: Path, line: str, message: str) -> None:
    with pytest.raises(ClusterConfigError, match=message):
        load_clusters(write(tmp_path, GOOD + line + "\n"))


def test_service_and_system_accounts_are_reserved(tmp_path: Path) -> None:
    path = write(tmp_path, GOOD + 'system_users = ["backupsvc"]\n')
    reserved = load_clusters(path)["one"].reserved_users
    assert {"root", "slurm", "hpcportal", "daemon", "backupsvc"} <= reserved
    assert "alice" not in reserved
