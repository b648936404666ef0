"""The [idle] table of an app definition and the http_json probe, against fake servers."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import pytest
from pydantic import ValidationError

from app.interactive import idle
from app.interactive.definitions import DefinitionError, load_definitions
from app.interactive.idle import Idle, ProbeContext, field_of, parse_time, register
from app.interactive.idle_check import IdleWatch
from app.interactive.upstream import Upstream

NOW = datetime(2026, 11, 27, 15, 0, tzinfo=UTC)
TARGET = Upstream("c7", 40123, "Authorization", "token s3cret")


def _context(
    client: httpx.AsyncClient, path: str = "api/status", field: str = "last_activity"
) -> ProbeContext:
    return ProbeContext(1, "u-1", TARGET, "/apps/sessions/u-1/", client, NOW, path, field)


def _answering(body: object, status: int = 200) -> httpx.AsyncClient:
    def reply(request: httpx.Request) -> httpx.Response:
        assert request.headers["authorization"] == "token s3cret"
        return httpx.Response(status, json=body)

    return httpx.AsyncClient(transport=httpx.MockTransport(reply))


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("2026-11-27T14:02:00.123456Z", datetime(2026, 11, 27, 14, 2, 0, 123456, tzinfo=UTC)),
        ("2026-11-27T15:02:00+01:00", datetime(2026, 11, 27, 14, 2, tzinfo=UTC)),
        ("2026-11-27T14:02:00", datetime(2026, 11, 27, 14, 2, tzinfo=UTC)),
        (1795788120, datetime(2026, 11, 27, 14, 2, tzinfo=UTC)),
        ("yesterday", None),
        (True, None),
        (None, None),
        ({"at": 1}, None),
    ],
)
def test_times_are_read_as_iso_8601_or_unix_seconds(
    value: object, expected: datetime | None
) -> None:
    assert parse_time(value) == expected


def test_a_dotted_field_reaches_into_nested_objects() -> None:
    assert field_of({"activity": {"last": 5}}, "activity.last") == 5
    assert field_of({"activity": 5}, "activity.last") is None


async def test_http_json_reads_the_field_of_the_apps_answer_at_its_path() -> None:
    async with _answering({"last_activity": "2026-11-27T14:02:00Z"}) as client:
        assert await idle.http_json(_context(client)) == datetime(2026, 11, 27, 14, 2, tzinfo=UTC)


@pytest.mark.parametrize(
    ("body", "status"),
    [({"last_activity": "2026-11-27T14:02:00Z"}, 503), ({"other": 1}, 200), (["x"], 200)],
)
async def test_http_json_cannot_tell_from_a_failure_or_a_missing_field(
    body: object, status: int
) -> None:
    async with _answering(body, status) as client:
        assert await idle.http_json(_context(client)) is None


async def test_an_app_clock_ahead_of_the_portals_reads_as_active_now() -> None:
    later = (NOW + timedelta(hours=1)).isoformat()
    async with _answering({"last_activity": later}) as client:
        assert await idle.http_json(_context(client)) == NOW


def test_an_unknown_probe_kind_or_a_missing_option_is_refused_by_name(tmp_path: Path) -> None:
    with pytest.raises(ValidationError, match="probe must be one of"):
        Idle(probe="no_such_probe")
    with pytest.raises(ValidationError, match="needs field"):
        Idle(probe="http_json", path="api/status")
    (tmp_path / "lab.toml").write_text(
        'name = "lab"\ntitle = "Lab"\nscript = "#!/bin/bash"\n[idle]\nprobe = "http_json"\n'
        'path = "x"\nfield = "a"\nlimit_minutse = 5\n'
    )
    with pytest.raises(DefinitionError, match="limit_minutse"):
        load_definitions(tmp_path)


def test_a_new_probe_kind_is_one_registered_function(monkeypatch: pytest.MonkeyPatch) -> None:
    async def no_input(context: ProbeContext) -> datetime | None:
        return context.now

    monkeypatch.setattr(idle, "PROBES", dict(idle.PROBES))
    register("no_input", no_input)

    assert Idle(probe="no_input").is_watched


def test_an_apps_own_limit_wins_over_the_sites_and_zero_means_never() -> None:
    jupyter = load_definitions()["jupyterlab"]
    two_hours = jupyter.model_copy(
        update={"idle": jupyter.idle.model_copy(update={"limit_minutes": 120})}
    )
    never = jupyter.model_copy(
        update={"idle": jupyter.idle.model_copy(update={"limit_minutes": 0})}
    )
    apps = {"jupyterlab": jupyter, "long": two_hours, "never": never}
    client = httpx.AsyncClient()
    site = IdleWatch(apps, client, timedelta(minutes=60), timedelta(minutes=15))
    off = IdleWatch(apps, client, None, timedelta(minutes=15))

    assert site.limits_for("jupyterlab") is not None
    assert site.limits_for("jupyterlab").limit == timedelta(minutes=60)  # type: ignore[union-attr]
    assert site.limits_for("long").limit == timedelta(minutes=120)  # type: ignore[union-attr]
    assert site.limits_for("never") is None and site.limits_for("unknown") is None
    assert off.limits_for("jupyterlab") is None
    assert off.watched_apps == ["long"]


@pytest.mark.parametrize(("state", "busy"), [("busy", True), ("idle", False)])
async def test_jupyterlab_with_a_kernel_running_a_silent_cell_is_in_use_now(
    state: str, busy: bool
) -> None:
    jupyter = load_definitions()["jupyterlab"].idle
    asked: list[str] = []

    def reply(request: httpx.Request) -> httpx.Response:
        asked.append(str(request.url))
        if request.url.path.endswith("api/kernels"):
            return httpx.Response(
                200, json=[{"execution_state": "idle"}, {"execution_state": state}]
            )
        return httpx.Response(200, json={"last_activity": "2026-11-27T14:02:00Z"})

    async with httpx.AsyncClient(transport=httpx.MockTransport(reply)) as client:
        context = ProbeContext(
            1, "u-1", TARGET, "/apps/sessions/u-1/", client, NOW, jupyter.path, jupyter.field,
            jupyter.busy_path, jupyter.busy_field, jupyter.busy_value,
        )  # fmt: skip
        found = await idle.http_json(context)

    assert found == (NOW if busy else datetime(2026, 11, 27, 14, 2, tzinfo=UTC))
    # Neither request counts as activity for Jupyter Server.
    assert asked == [
        "http://c7:40123/apps/sessions/u-1/api/status",
        "http://c7:40123/apps/sessions/u-1/api/kernels?no_track_activity=1",
    ]


def test_busy_options_go_together() -> None:
    with pytest.raises(ValidationError, match="go together"):
        Idle(probe="http_json", path="s", field="f", busy_path="k")


def _desktop(started: datetime | None, viewed: datetime | None) -> ProbeContext:
    return ProbeContext(
        1, "u-1", None, "/apps/sessions/u-1/", httpx.AsyncClient(), NOW, "", "",
        started_at=started, viewed_at=viewed,
    )  # fmt: skip


STARTED = NOW - timedelta(hours=2)


@pytest.mark.parametrize(
    ("viewed", "expected"),
    [
        # Nobody ever opened it: idle since it started.
        (None, STARTED),
        # The last viewer left (or the stream was last noted) 40 minutes ago.
        (NOW - timedelta(minutes=40), NOW - timedelta(minutes=40)),
        # A stream open now is noted every few seconds: in use.
        (NOW, NOW),
        # A web worker whose clock is ahead of the poller's: in use now, never later.
        (NOW + timedelta(minutes=3), NOW),
    ],
)
async def test_a_desktop_is_idle_from_when_its_last_viewer_left_or_from_its_start(
    viewed: datetime | None, expected: datetime
) -> None:
    assert await idle.no_viewer(_desktop(STARTED, viewed)) == expected


async def test_a_desktop_not_yet_started_nor_viewed_cannot_tell() -> None:
    assert await idle.no_viewer(_desktop(None, None)) is None


def test_the_desktop_app_is_idle_when_nobody_has_it_open() -> None:
    desktop = load_definitions()["desktop"]

    assert desktop.idle.probe == "no_viewer" and desktop.idle.is_watched
