"""The template helpers the pages lean on: remembered route paths and ``<time>`` elements."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

from fastapi import FastAPI
from markupsafe import escape
from starlette.requests import Request

from app.i18n import use_locale
from app.templating import create_templates, local_time
from app.web.dashboard import JobRow
from app.web.jobs_fragments import state_badge


def _app(prefix: str) -> FastAPI:
    app = FastAPI()

    @app.get(f"{prefix}/jobs/{{job_id}}", name="job")
    async def job(job_id: int) -> None: ...

    @app.get(f"{prefix}/files/{{where:path}}", name="files")
    async def files(where: str) -> None: ...

    return app


def _request(app: FastAPI, host: str) -> Request:
    scope = {
        "type": "http",
        "app": app,
        "router": app.router,
        "scheme": "https",
        "server": (host, 443),
        "path": "/",
        "root_path": "",
        "query_string": b"",
        "headers": [(b"host", host.encode())],
    }
    return Request(scope)


def test_a_remembered_route_path_keeps_each_requests_host_and_each_applications_routes(
    tmp_path: Path,
) -> None:
    env = create_templates(tmp_path).env
    page = env.from_string("{{ url_for('job', job_id=n) }} {{ url_for('files', where=w) }}")
    first, second = _app(""), _app("/portal")
    seen = []
    for app, host in ((first, "a.example"), (first, "b.example"), (second, "a.example")):
        for _ in range(2):  # the second time from what was remembered
            request = _request(app, host)
            unhashable = ["a", "b"]
            shown = page.render(request=request, n=7, w=unhashable)
            job, files = (
                request.url_for("job", job_id=7),
                request.url_for("files", where=unhashable),
            )
            expected = f"{job} {escape(str(files))}"
            assert shown == expected
            seen.append(shown)
    assert seen[0].startswith("https://a.example/jobs/7 ")
    assert seen[2].startswith("https://b.example/jobs/7 ")
    assert seen[4].startswith("https://a.example/portal/jobs/7 ")


def test_local_time_is_a_time_element_in_utc_from_naive_or_aware_moments() -> None:
    expected = (
        '<time datetime="2026-03-01T12:30:05Z" title="2026-03-01 12:30:05 UTC" '
        'data-local-time="second">2026-03-01 12:30:05 UTC</time>'
    )
    assert str(local_time(datetime(2026, 3, 1, 12, 30, 5))) == expected
    paris = timezone(timedelta(hours=1))
    assert str(local_time(datetime(2026, 3, 1, 13, 30, 5, tzinfo=paris))) == expected
    assert str(local_time(datetime(2026, 3, 1, 12, 30, 5, tzinfo=UTC), seconds=False)) == (
        '<time datetime="2026-03-01T12:30:05Z" title="2026-03-01 12:30 UTC" '
        'data-local-time="minute">2026-03-01 12:30 UTC</time>'
    )
    assert str(local_time(None)) == "—"


def test_a_cached_row_is_rendered_once_per_language_and_again_when_anything_shown_changes() -> None:
    env = create_templates().env
    table = env.from_string(
        '{% from "components/_job_row.html" import job_table %}{{ job_table(rows, "Jobs") }}'
    )
    running = JobRow(
        id=7,
        name="<b>fit</b>",
        slurm_id="4242",
        badge=state_badge("running"),
        project="physics",
        owner="alice",
        cluster="testcluster",
        submitted=local_time(datetime(2026, 3, 1, 12, 30, 5)),
        elapsed="1 min",
        tasks=None,
    )
    calls: list[tuple[object, ...]] = []
    module = env.get_template("components/_job_row.html").module
    original = module.job_row

    def counted(*args: object) -> object:
        calls.append(args)
        return original(*args)

    module.job_row = counted
    try:
        first, again = table.render(rows=[running]), table.render(rows=[running])
        ended = replace(running, badge=state_badge("completed"), elapsed="2 min")
        later = table.render(rows=[ended])
        with use_locale("fr"):
            french = table.render(rows=[running])
    finally:
        module.job_row = original
    assert first == again
    assert [args[0] for args in calls] == [running, ended, running]
    assert "&lt;b&gt;fit&lt;/b&gt;" in first and "<b>fit" not in first
    assert "Running" in first and "1 min" in first
    assert "Completed" in later and "2 min" in later and "Running" not in later
    assert 'data-label="Soumis le"' in french and 'data-label="Submitted"' not in french
