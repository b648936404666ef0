"""GrpTRESMins as ``sacctmgr show associations`` prints it (format as on the 22.05 cluster)."""

from app.scheduler.slurm.limits import account_limits_argv, parse_account_limits
from app.scheduler.types import TresMinutesLimit

OUTPUT = (
    "testcluster|root||\n"
    "testcluster|physics||cpu=6,gres/gpu=120\n"
    "testcluster|physics|alice|cpu=3\n"
    "testcluster|physics|carol|\n"
    "othercluster|physics||cpu=99\n"
)


def test_one_read_only_call_lists_every_association() -> None:
    argv = account_limits_argv()
    assert argv[:4] == ["sacctmgr", "--noheader", "--parsable2", "show"]
    assert argv[-1] == "format=Cluster,Account,User,GrpTRESMins"


def test_only_this_clusters_associations_with_a_limit_are_kept() -> None:
    assert parse_account_limits(OUTPUT, "testcluster") == [
        TresMinutesLimit("physics", "", {"cpu": 6, "gres/gpu": 120}),
        TresMinutesLimit("physics", "alice", {"cpu": 3}),
    ]
