"""Whether a job's time limit crosses a cluster's next maintenance window (pure).

Slurm starts a job only if its whole time limit ends before a MAINT reservation begins on
its nodes; otherwise it pends ("ReqNodeNotAvail, Reserved for maintenance") until the
window is over. The portal says so before the job is sent, with the limit that would fit.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from app.announcements.text import spoken_duration
from app.i18n import _


@dataclass(frozen=True, slots=True)
class Window:
    """A maintenance window on a cluster (on one partition, or all when ``partition`` is None)."""

    cluster: str
    start: datetime
    end: datetime | None
    partition: str | None = None

    def applies_to(self, partition: str | None) -> bool:
        return self.partition is None or partition is None or self.partition == partition


def utc_text(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%d %H:%M UTC")


@dataclass(frozen=True, slots=True)
class Clash:
    """A job that would wait for a maintenance window instead of running now."""

    window: Window
    asked_minutes: int
    minutes_until: int
    """Whole minutes until the window begins; 0 when it is already under way."""

    @property
    def fitting_minutes(self) -> int:
        """The longest time limit that still ends before the window (0 if none does)."""
        return self.minutes_until

    def message(self) -> str:
        if self.minutes_until <= 0:
            until = utc_text(self.window.end) if self.window.end else _("further notice")
            return _(
                "%(cluster)s is stopped for maintenance until %(end)s, so this job will "
                "wait until after it.",
                cluster=self.window.cluster,
                end=until,
            )
        return _(
            "This job asks for %(asked)s; %(cluster)s stops for maintenance in %(until)s, "
            "so it will wait until after it — ask for less than %(until)s to run now.",
            asked=spoken_duration(self.asked_minutes),
            cluster=self.window.cluster,
            until=spoken_duration(self.minutes_until),
        )


def clash(
    windows: Iterable[Window], now: datetime, asked_minutes: int | None, partition: str | None
) -> Clash | None:
    """The first window this job would cross, if its time limit reaches into one."""
    if asked_minutes is None:
        return None
    ahead = sorted(
        (w for w in windows if (w.end is None or w.end > now) and w.applies_to(partition)),
        key=lambda w: w.start,
    )
    for window in ahead:
        seconds = (window.start - now).total_seconds()
        if seconds <= 0:
            return Clash(window, asked_minutes, 0)
        if asked_minutes * 60 > seconds:
            return Clash(window, asked_minutes, int(seconds // 60))
    return None
