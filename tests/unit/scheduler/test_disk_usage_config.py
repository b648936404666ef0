"""The clusters file's disk usage keys, and the command they make."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.scheduler.config import ClusterConfig, ClusterConfigError, load_clusters
from app.scheduler.errors import InvalidSpec
from app.scheduler.slurm.commands import disk_usage_argv

TOML = """
[clusters.one]
login_host = "127.0.0.1"
user_ca_key = "/k/ca"
service_user = "hpcsvc"
service_key = "/k/svc"
"""


def load_clusters_one(tmp_path: Path, extra: str = "") -> ClusterConfig:
    path = tmp_path / "clusters.toml"
    path.write_text(TOML + extra)
    return load_clusters(path)["one"]


def test_disk_usage_is_off_unless_a_command_is_configured(tmp_path: Path) -> None:
    config = load_clusters_one(tmp_path)
    assert config.disk_usage_command == ()
    assert config.disk_usage_format == "auto"


def test_the_command_is_an_argv_with_its_format(tmp_path: Path) -> None:
    config = load_clusters_one(
        tmp_path,
        'disk_usage_command = ["lfs", "quota", "-h", "-u", "{user}", "/lustre"]\n'
        'disk_usage_format = "lfs"\n',
    )
    assert config.disk_usage_command == ("lfs", "quota", "-h", "-u", "{user}", "/lustre")
    assert config.disk_usage_format == "lfs"


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ('disk_usage_command = "quota -w"', "disk_usage_command: must be a list of arguments"),
        ('disk_usage_command = ["quota", ""]', "must not contain empty arguments"),
        ('disk_usage_format = "df"', "disk_usage_format: Input should be 'auto'"),
        ('disk_usage_cmd = ["quota"]', "unknown key 'disk_usage_cmd'"),
    ],
)
def test_a_wrong_disk_usage_key_is_refused_by_name(tmp_path: Path, line: str, message: str) -> None:
    with pytest.raises(ClusterConfigError, match=message):
        load_clusters_one(tmp_path, line + "\n")


def test_the_username_takes_the_place_of_user_in_whole_arguments() -> None:
    argv = disk_usage_argv(("lfs", "quota", "-u", "{user}", "/home/{user}"), "alice")
    assert argv == ["env", "LC_ALL=C", "lfs", "quota", "-u", "alice", "/home/alice"]


def test_a_username_that_is_not_one_never_reaches_the_command() -> None:
    with pytest.raises(InvalidSpec):
        disk_usage_argv(("quota", "-u", "{user}"), "alice; rm -rf ~")
