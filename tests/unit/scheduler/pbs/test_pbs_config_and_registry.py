"""``scheduler = "pbs"`` in the clusters file picks the PBS adapter."""

from pathlib import Path

import pytest

from app.scheduler.capabilities import SLURM, capabilities_of
from app.scheduler.config import ClusterConfigError, load_clusters
from app.scheduler.pbs.adapter import PbsAdapter
from app.scheduler.registry import ADAPTERS, build_adapter
from app.scheduler.slurm.adapter import SlurmAdapter

TOML = """
[clusters.pbscluster]
scheduler = "pbs"
login_host = "pbshead"
user_ca_key = "/k/ca"
service_user = "hpcsvc"
service_key = "/k/svc"
"""


def load(tmp_path: Path, text: str):
    path = tmp_path / "clusters.toml"
    path.write_text(text)
    return load_clusters(path)["pbscluster"]


def test_a_cluster_is_slurm_unless_its_entry_says_otherwise(tmp_path: Path) -> None:
    config = load(tmp_path, TOML.replace('scheduler = "pbs"\n', ""))
    assert config.scheduler == "slurm"
    assert isinstance(build_adapter(config), SlurmAdapter)
    assert capabilities_of(build_adapter(config)) is SLURM


async def test_scheduler_pbs_builds_the_pbs_adapter_over_ssh(tmp_path: Path) -> None:
    config = load(tmp_path, TOML)
    adapter = build_adapter(config)
    assert isinstance(adapter, PbsAdapter)
    assert capabilities_of(adapter).partition_word == "queue"
    await adapter.close()


def test_every_scheduler_name_of_the_file_but_lsf_has_an_adapter() -> None:
    assert set(ADAPTERS) >= {"slurm", "pbs"}


@pytest.mark.parametrize(
    ("old", "new", "said"),
    [
        ('scheduler = "pbs"', 'scheduler = "torque"', "scheduler"),
        (
            'scheduler = "pbs"',
            'scheduler = "pbs"\ntransport = "rest"\nrest_url = "http://x"\njwt_key = "/k/j"',
            "pbs has no REST API",
        ),
    ],
)
def test_an_unknown_scheduler_or_rest_on_pbs_is_refused(
    tmp_path: Path, old: str, new: str, said: str
) -> None:
    with pytest.raises(ClusterConfigError, match=said):
        load(tmp_path, TOML.replace(old, new))
