"""Parsers of disk usage commands, on outputs laid out as quota, lfs quota and
diskusage_report print them (tests/fixtures/disk_usage)."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.scheduler.disk_usage import FilesystemUsage, QuotaFigures, count_of, size_in_bytes
from app.scheduler.disk_usage_parsing import detect_format, parse_disk_usage, read_disk_usage
from app.scheduler.errors import DiskUsageUnavailable

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "disk_usage"
KiB, MiB, GiB, TiB = 1024, 1024**2, 1024**3, 1024**4


def recorded(name: str) -> str:
    return (FIXTURES / name).read_text()


def by_name(found: list[FilesystemUsage]) -> dict[str, FilesystemUsage]:
    return {usage.label: usage for usage in found}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1024M", GiB),
        ("2G", 2 * GiB),
        ("5T", 5 * TiB),
        ("109k", 109 * KiB),
        ("2.1GiB", round(2.1 * GiB)),
        ("20 GiB", 20 * GiB),
        ("3GB", 3_000_000_000),
        ("512B", 512),
        ("0", 0),
    ],
)
def test_sizes_read_binary_units_and_decimal_ones_spelt_with_b(text: str, expected: int) -> None:
    assert size_in_bytes(text) == expected


def test_a_bare_size_counts_in_the_unit_the_tool_uses() -> None:
    assert size_in_bytes("1048576", bare_unit=KiB) == GiB


@pytest.mark.parametrize(
    ("text", "expected"),
    [("4953", 4953), ("500k", 500_000), ("250K", 250_000), ("1.2m", 1_200_000)],
)
def test_file_counts_read_thousands_suffixes(text: str, expected: int) -> None:
    assert count_of(text) == expected


@pytest.mark.parametrize("text", ["", "12 apples", "G5", "-"])
def test_a_figure_that_is_not_one_is_refused(text: str) -> None:
    with pytest.raises(ValueError, match="not a"):
        size_in_bytes(text)


def test_quota_v_w_gives_each_filesystem_with_soft_and_hard_limits() -> None:
    found = by_name(parse_disk_usage(recorded("quota-v-w.txt"), "quota"))

    home = found["/dev/sdb1"]
    assert home.space == QuotaFigures(GiB, soft=5 * GiB, hard=6 * GiB)
    assert home.files == QuotaFigures(12034, soft=100_000, hard=120_000)
    assert not home.is_over
    assert home.raw.split() == [
        "/dev/sdb1",
        "1048576",
        "5242880",
        "6291456",
        "12034",
        "100000",
        "120000",
    ]


def test_quota_over_its_soft_limit_has_the_mark_and_the_grace_left() -> None:
    found = by_name(parse_disk_usage(recorded("quota-v-w.txt"), "quota"))

    scratch = found["/dev/mapper/vg0-scratch"]
    assert scratch.space.is_marked_over and scratch.space.grace == "6days"
    assert scratch.is_over
    assert scratch.files.limit is None  # 0 means no limit


def test_quota_filesystem_without_limits_has_none() -> None:
    unlimited = by_name(parse_disk_usage(recorded("quota-v-w.txt"), "quota"))["/dev/sdc1"]
    assert unlimited.space == QuotaFigures(0) and unlimited.files == QuotaFigures(0)
    assert unlimited.space.limit is None and not unlimited.is_over


def test_quota_s_human_sizes_and_a_wrapped_long_device_name() -> None:
    found = by_name(parse_disk_usage(recorded("quota-s.txt"), "quota"))

    nfs = found["nfs01.example.org:/export/home"]
    assert nfs.space == QuotaFigures(249 * MiB, soft=100 * GiB, hard=105 * GiB)
    assert nfs.files == QuotaFigures(4953, soft=500_000, hard=1_000_000)
    assert nfs.raw.splitlines()[0] == "nfs01.example.org:/export/home"
    local = found["/dev/sdd1"]
    assert local.space == QuotaFigures(GiB, soft=2 * GiB, hard=5 * TiB)
    assert local.files.is_marked_over and local.files.grace == "23:59"
    assert local.files.used == 510_000


def test_quota_p_raw_grace_is_when_it_ends() -> None:
    [home] = parse_disk_usage(recorded("quota-w-p.txt"), "quota")
    assert home.space.grace == "until 2026-12-01 12:00 UTC"
    assert home.files.grace is None  # "0": not over


def test_quota_at_its_hard_limit_without_a_soft_one_is_over_with_no_grace() -> None:
    found = by_name(parse_disk_usage(recorded("quota-hard-limit.txt"), "quota"))

    at_limit = found["/dev/sdb1"]
    assert at_limit.space == QuotaFigures(2 * GiB, hard=2 * GiB, is_marked_over=True)
    assert at_limit.files.used == 100
    assert found["/dev/sdc1"].space.grace == "expired"


def test_no_quota_set_is_an_empty_list_not_an_error() -> None:
    assert parse_disk_usage(recorded("quota-none.txt")) == []


def test_user_and_group_quotas_say_whose_each_is() -> None:
    found = parse_disk_usage(recorded("quota-user-and-group.txt"))
    assert [usage.label for usage in found] == [
        "/dev/sdb1 (user alice)",
        "/dev/sdb1 (group physics)",
    ]


def test_lfs_quota_kbytes_without_limits() -> None:
    [home] = parse_disk_usage(recorded("lfs-quota-u.txt"), "lfs")
    assert home.filesystem == "/lustre/home"
    assert home.space == QuotaFigures(2453736 * KiB)
    assert home.files == QuotaFigures(31337)


def test_lfs_quota_h_over_the_soft_limit_in_its_grace_period() -> None:
    [project] = parse_disk_usage(recorded("lfs-quota-h-over.txt"), "lfs")
    assert project.space.is_marked_over and project.space.grace == "6d23h59m50s"
    assert project.space.soft == 4 * GiB and project.space.hard == 5 * GiB
    assert project.space.used == pytest.approx(4.011 * GiB, rel=1e-4)
    assert project.files.grace is None


def test_lfs_quota_v_keeps_the_filesystem_and_leaves_out_its_targets() -> None:
    [scratch] = parse_disk_usage(recorded("lfs-quota-v-long-mount.txt"), "lfs")
    assert scratch.filesystem == "/lustre/scratch-fs01"
    assert scratch.space == QuotaFigures(GiB, soft=2 * TiB, hard=3 * TiB)
    assert scratch.files == QuotaFigures(100, soft=1_000_000, hard=1_200_000)


def test_lfs_quota_without_u_gives_user_and_group() -> None:
    found = parse_disk_usage(recorded("lfs-quota-user-and-group.txt"))
    assert [usage.label for usage in found] == [
        "/lustre/home (user alice)",
        "/lustre/home (group physics)",
    ]


def test_diskusage_report_rows_with_their_limits() -> None:
    found = by_name(parse_disk_usage(recorded("diskusage_report.txt"), "diskusage_report"))

    assert list(found) == [
        "/home (user alice)",
        "/scratch (user alice)",
        "/project (group alice)",
        "/project (group def-physics)",
    ]
    home = found["/home (user alice)"]
    assert home.space == QuotaFigures(109 * KiB, hard=50 * GiB)
    assert home.files == QuotaFigures(12, hard=500_000)
    assert found["/project (group def-physics)"].space.used == 956 * GiB


def test_diskusage_report_in_gib_with_spaces_after_the_slash() -> None:
    found = by_name(parse_disk_usage(recorded("diskusage_report-gib.txt")))
    assert found["/scratch (user alice)"].space == QuotaFigures(148 * GiB, hard=500 * GiB)
    assert found["/scratch (user alice)"].files == QuotaFigures(418_000, hard=500_000)


def test_diskusage_report_breakdown_and_hints_are_not_filesystems() -> None:
    [project] = parse_disk_usage(recorded("diskusage_report-breakdown.txt"))
    assert project.label == "/project (project def-physics)"
    assert project.space == QuotaFigures(39 * TiB, hard=75 * TiB)


def test_diskusage_report_at_its_limit_is_over() -> None:
    [home] = parse_disk_usage("/home (user alice)  50GiB/50GiB  10/500k\n")
    assert home.space.is_over and not home.files.is_over


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("quota-v-w.txt", "quota"),
        ("quota-none.txt", "quota"),
        ("lfs-quota-u.txt", "lfs"),
        ("lfs-quota-h-over.txt", "lfs"),
        ("diskusage_report.txt", "diskusage_report"),
        ("diskusage_report-gib.txt", "diskusage_report"),
        ("garbage-df.txt", None),
    ],
)
def test_auto_recognises_each_format(name: str, expected: str | None) -> None:
    assert detect_format(recorded(name)) == expected


def test_auto_reads_every_recorded_output_like_its_own_format() -> None:
    for name, fmt in (("quota-s.txt", "quota"), ("lfs-quota-u.txt", "lfs")):
        assert parse_disk_usage(recorded(name)) == parse_disk_usage(recorded(name), fmt)


@pytest.mark.parametrize("text", ["", "\n  \n"])
def test_empty_output_is_a_clear_error(text: str) -> None:
    with pytest.raises(DiskUsageUnavailable, match="the command printed nothing"):
        parse_disk_usage(text)


def test_garbage_is_a_clear_error_naming_what_was_printed() -> None:
    with pytest.raises(
        DiskUsageUnavailable, match=r"no format the portal reads.*Filesystem\s+Size"
    ):
        parse_disk_usage(recorded("garbage-df.txt"))


@pytest.mark.parametrize(
    ("fmt", "message"), [("quota", "not quota output"), ("lfs", "not lfs quota output")]
)
def test_output_of_another_tool_than_configured_is_refused(fmt: str, message: str) -> None:
    with pytest.raises(DiskUsageUnavailable, match=message):
        parse_disk_usage(recorded("diskusage_report.txt"), fmt)  # type: ignore[arg-type]


def test_a_broken_quota_row_is_named() -> None:
    text = recorded("quota-v-w.txt") + "      /dev/sde1  12 0 0 banana 0 0\n"
    with pytest.raises(DiskUsageUnavailable, match=r"cannot be read: .*banana"):
        parse_disk_usage(text, "quota")


def test_quota_exiting_1_because_over_quota_still_gives_its_figures() -> None:
    found = read_disk_usage(recorded("quota-v-w.txt"), "", 1, "quota")
    assert any(usage.is_over for usage in found)


def test_a_failing_command_is_reported_in_its_own_words() -> None:
    stderr = "quota: Cannot stat() mounted device /dev/sdb1: No such file or directory\n"
    with pytest.raises(DiskUsageUnavailable) as raised:
        read_disk_usage("", stderr, 1)
    assert str(raised.value) == stderr.strip()


def test_a_silent_failure_gives_its_exit_status() -> None:
    with pytest.raises(DiskUsageUnavailable, match="exited with status 2"):
        read_disk_usage("", "", 2)
