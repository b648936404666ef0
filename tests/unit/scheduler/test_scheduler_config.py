import dataclasses
from pathlib import Path

import pytest

from app.scheduler.config import ClusterConfigError, load_clusters
from app.scheduler.lsf.adapter import LsfAdapter
from app.scheduler.registry import UnsupportedScheduler, build_adapter
from app.scheduler.slurm.adapter import SlurmAdapter

TOML = """
[clusters.one]
transport = "rest"
login_host = "127.0.0.1"
login_port = 2222
known_hosts = ""
user_ca_key = "/k/ca"
service_user = "hpcsvc"
service_key = "/k/svc"
rest_url = "http://127.0.0.1:6820/"
jwt_key = "/k/jwt"
log_roots = ["/home"]
"""


def test_clusters_file_is_loaded(tmp_path: Path) -> None:
    path = tmp_path / "clusters.toml"
    path.write_text(TOML)
    config = load_clusters(path)["one"]
    assert config.transport == "rest"
    assert config.rest_url == "http://127.0.0.1:6820"
    assert config.log_roots == ("/home",)
    assert not config.is_host_key_checked
    assert config.forbidden_users == {"root", "slurm"}
    assert config.compute_access == "direct"
    assert config.scheduler == "slurm"
    assert config.queue_reads == "ssh"


def test_the_queue_may_be_listed_through_slurmrestd(tmp_path: Path) -> None:
    path = tmp_path / "clusters.toml"
    path.write_text(TOML + 'queue_reads = "rest"\n')
    assert load_clusters(path)["one"].queue_reads == "rest"


def test_compute_nodes_may_be_reached_through_the_login_node(tmp_path: Path) -> None:
    path = tmp_path / "clusters.toml"
    path.write_text(TOML + 'compute_access = "via_login"\n')
    assert load_clusters(path)["one"].compute_access == "via_login"


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ('service_user = "hpcsvc"\n', ""),
        ('transport = "rest"', 'transport = "carrier-pigeon"'),
        ('jwt_key = "/k/jwt"', ""),
        ('log_roots = ["/home"]', 'log_roots = ["home"]'),
        ('log_roots = ["/home"]', 'log_roots = ["/home"]\ncompute_access = "through-login"'),
        ('log_roots = ["/home"]', 'log_roots = ["/home"]\nscheduler = "sge"'),
        # Listing through slurmrestd needs its transport.
        ('transport = "rest"', 'transport = "ssh"\nqueue_reads = "rest"'),
        # OpenLava (LSF) has no REST service to reach.
        ('log_roots = ["/home"]', 'log_roots = ["/home"]\nscheduler = "lsf"'),
    ],
)
def test_broken_cluster_entries_are_refused(tmp_path: Path, old: str, new: str) -> None:
    path = tmp_path / "clusters.toml"
    path.write_text(TOML.replace(old, new))
    with pytest.raises(ClusterConfigError):
        load_clusters(path)


def test_the_scheduler_key_chooses_the_adapter(tmp_path: Path) -> None:
    path = tmp_path / "clusters.toml"
    path.write_text(TOML.replace('"rest"', '"ssh"') + 'scheduler = "lsf"\n')
    config = load_clusters(path)["one"]
    assert config.scheduler == "lsf"
    assert isinstance(build_adapter(config), LsfAdapter)
    slurm = dataclasses.replace(config, scheduler="slurm")
    assert isinstance(build_adapter(slurm), SlurmAdapter)
    with pytest.raises(UnsupportedScheduler):
        build_adapter(dataclasses.replace(config, scheduler="sge"))  # type: ignore[arg-type]
