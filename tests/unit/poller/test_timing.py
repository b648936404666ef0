"""Poll timing: the lease outlives the holder's gap, failures back off to a one-minute cap."""

from __future__ import annotations

import pytest

from app.poller.runner import JITTER, MAX_BACKOFF_SECONDS, PollTiming


def _bounds(seconds: float) -> tuple[float, float]:
    return seconds * (1 - JITTER), seconds * (1 + JITTER)


@pytest.mark.parametrize("interval", [1.0, 10.0])
def test_a_healthy_cluster_is_polled_every_interval_give_or_take_the_jitter(
    interval: float,
) -> None:
    low, high = _bounds(interval)
    assert all(low <= PollTiming(interval).after_cycle(0) <= high for _ in range(200))


def test_failures_double_the_wait_up_to_one_minute() -> None:
    timing = PollTiming(10.0)
    for failures, expected in [(1, 20.0), (2, 40.0), (3, 60.0), (4, 60.0), (50, 60.0)]:
        low, high = _bounds(expected)
        assert low <= timing.after_cycle(failures) <= high, failures
    assert MAX_BACKOFF_SECONDS == 60.0


def test_an_interval_longer_than_the_cap_is_never_shortened_by_failures() -> None:
    low, _ = _bounds(120.0)
    assert PollTiming(120.0).after_cycle(5) >= low


def test_the_lease_outlives_the_holders_longest_healthy_gap() -> None:
    timing = PollTiming(10.0)
    _, longest_gap = _bounds(10.0)
    assert timing.lease.total_seconds() > longest_gap
    # A standby retries often enough to take over within two intervals of the last renewal.
    assert timing.lease.total_seconds() + timing.standby_retry <= 2 * 10.0


def test_the_back_off_ceiling_is_a_setting_defaulting_to_one_minute() -> None:
    from app.config import Settings

    settings = Settings(poll_backoff_max=5.0)
    timing = PollTiming(1.0, settings.poll_backoff_max)
    low, high = _bounds(5.0)
    assert all(low <= timing.after_cycle(failures) <= high for failures in (3, 4, 50))
    assert Settings().poll_backoff_max == MAX_BACKOFF_SECONDS
    assert Settings().submit_grace == 60.0
