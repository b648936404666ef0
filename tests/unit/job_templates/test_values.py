import pytest

from app.job_templates.values import format_duration, parse_duration, parse_memory


@pytest.mark.parametrize(
    ("text", "minutes"),
    [
        ("1:00:00", 60),
        ("0:30:00", 30),
        ("01:30:59", 91),
        ("2-00:00:00", 2880),
        ("1-12", 2160),
        ("45", 45),
        ("10:30", 11),
    ],
)
def test_duration_is_read_the_way_slurm_reads_it(text: str, minutes: int) -> None:
    assert parse_duration(text) == minutes


@pytest.mark.parametrize("text", ["", "abc", "1:60:00", "0:00:00", "1:00:00; rm", "-5"])
def test_malformed_duration_is_refused(text: str) -> None:
    with pytest.raises(ValueError):
        parse_duration(text)


@pytest.mark.parametrize(
    ("minutes", "shown"), [(60, "1:00:00"), (90, "1:30:00"), (10080, "7-00:00:00")]
)
def test_duration_is_formatted_like_slurm_limits(minutes: int, shown: str) -> None:
    assert format_duration(minutes) == shown


@pytest.mark.parametrize(
    ("text", "megabytes"),
    [("4G", 4096), ("32000M", 32000), ("1Gb", 1024), ("500", 500), ("1.5G", 1536), ("1T", 1048576)],
)
def test_memory_becomes_megabytes(text: str, megabytes: int) -> None:
    assert parse_memory(text) == megabytes


@pytest.mark.parametrize("text", ["", "G", "4X", "4G 1", "-1G", "0"])
def test_malformed_memory_is_refused(text: str) -> None:
    with pytest.raises(ValueError):
        parse_memory(text)
