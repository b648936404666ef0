"""seff-style efficiency figures and the wasteful-pattern flags."""

from __future__ import annotations

import pytest

from app.reports.efficiency import Usage, efficiency


def usage(**fields: object) -> Usage:
    values: dict[str, object] = {
        "elapsed_seconds": 100,
        "alloc_cpus": 4,
        "total_cpu_seconds": 200.0,
        "max_rss_mb": 500.0,
        "requested_mem_mb": 1000.0,
        "time_limit_seconds": 400,
    }
    values.update(fields)
    return Usage(**values)  # type: ignore[arg-type]


def test_cpu_memory_and_time_efficiency_follow_seff() -> None:
    result = efficiency(usage())
    assert result.cpu == pytest.approx(200 / (100 * 4))
    assert result.memory == pytest.approx(0.5)
    assert result.time == pytest.approx(0.25)
    assert result.flags == ()


@pytest.mark.parametrize(
    ("fields", "flag"),
    [
        ({"max_rss_mb": 100.0, "requested_mem_mb": 1000.0}, "memory_oversized"),
        ({"total_cpu_seconds": 99.0}, "cpu_underused"),
        ({"time_limit_seconds": 1000}, "time_limit_oversized"),
    ],
)
def test_wasteful_patterns_are_flagged_at_their_thresholds(
    fields: dict[str, object], flag: str
) -> None:
    assert efficiency(usage(**fields)).flags == (flag,)


def test_single_cpu_job_is_never_flagged_for_low_cpu_efficiency() -> None:
    result = efficiency(usage(alloc_cpus=1, total_cpu_seconds=1.0))
    assert result.cpu == pytest.approx(0.01)
    assert "cpu_underused" not in result.flags


def test_unknown_values_give_no_ratio_instead_of_zero() -> None:
    result = efficiency(usage(elapsed_seconds=0, max_rss_mb=None, time_limit_seconds=None))
    assert (result.cpu, result.memory, result.time) == (None, None, None)
