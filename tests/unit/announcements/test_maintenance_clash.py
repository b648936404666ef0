"""Whether a time limit reaches into the next maintenance window, and what the user reads."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from app.announcements.maintenance import Window, clash
from app.i18n import use_locale

NOW = datetime(2026, 11, 27, 12, 0, tzinfo=UTC)
IN_30_HOURS = Window("testcluster", NOW + timedelta(hours=30), NOW + timedelta(hours=36))


def test_a_two_day_job_before_a_window_in_30_hours_is_told_what_fits() -> None:
    found = clash([IN_30_HOURS], NOW, 2 * 24 * 60, "long")
    assert found is not None
    assert found.minutes_until == found.fitting_minutes == 30 * 60
    with use_locale("en"):
        assert found.message() == (
            "This job asks for 2 days; testcluster stops for maintenance in 30 hours, so it "
            "will wait until after it — ask for less than 30 hours to run now."
        )
    with use_locale("fr"):
        assert found.message() == (
            "Ce travail demande 2 jours\u202f; testcluster s'arrête pour maintenance dans "
            "30 heures, il attendra donc la fin de celle-ci — demandez moins de 30 heures pour "
            "qu'il démarre maintenant."
        )


def test_a_job_that_ends_before_the_window_or_without_a_limit_is_not_warned() -> None:
    assert clash([IN_30_HOURS], NOW, 30 * 60, None) is None
    assert clash([IN_30_HOURS], NOW, None, None) is None
    assert clash([], NOW, 10_000, None) is None


def test_a_window_under_way_holds_every_job_until_its_end() -> None:
    under_way = Window("testcluster", NOW - timedelta(hours=1), NOW + timedelta(hours=2))
    found = clash([under_way], NOW, 5, None)
    assert found is not None and found.minutes_until == 0
    with use_locale("en"):
        assert found.message() == (
            "testcluster is stopped for maintenance until 2026-11-27 14:00 UTC, so this job "
            "will wait until after it."
        )


def test_a_window_over_or_on_another_partition_is_ignored_and_the_nearest_counts() -> None:
    over = Window("testcluster", NOW - timedelta(hours=5), NOW - timedelta(hours=1))
    gpu_only = Window("testcluster", NOW + timedelta(hours=1), None, partition="gpu")
    later = Window("testcluster", NOW + timedelta(hours=50), None)
    found = clash([later, over, gpu_only, IN_30_HOURS], NOW, 60 * 60, "long")
    assert found is not None and found.window == IN_30_HOURS
    found_on_gpu = clash([gpu_only], NOW, 90, "gpu")
    assert found_on_gpu is not None and found_on_gpu.minutes_until == 60
