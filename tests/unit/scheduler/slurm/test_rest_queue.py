"""The slurmrestd job list asks whether anything changed, over answers recorded from each API."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

import pytest

from app.scheduler.slurm.rest_parsing import job_from_rest
from app.scheduler.slurm.rest_queue import FULL_READ_SECONDS, RestQueue
from app.scheduler.slurm.rest_versions import update_time_form


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class Slurmrestd:
    """Answers each listing with the next scripted payload, and keeps the queries asked."""

    def __init__(self, clock: Clock, *answers: Mapping[str, Any], takes: float = 0.1) -> None:
        self.clock, self.answers, self.takes = clock, list(answers), takes
        self.asked: list[Mapping[str, str] | None] = []

    async def __call__(self, query: Mapping[str, str] | None) -> Mapping[str, Any]:
        self.asked.append(query)
        self.clock.now += self.takes
        answer = self.answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer


def ids(jobs: Any) -> list[str]:
    return [job.job_id for job in jobs]


def parsed(payload: Mapping[str, Any], api: str) -> list[str]:
    return [job.job_id for job in (job_from_rest(job, api) for job in payload["jobs"])]


def stamp(payload: Mapping[str, Any]) -> int:
    return int(payload["last_update"]["number"])


def payloads(recorded: Any) -> dict[str, tuple[Any, Any, Any]]:
    """``{api: (active, finished, unchanged)}`` for every API that takes ``update_time``."""
    active, finished = recorded.rest("rest-jobs-active"), recorded.rest("rest-jobs-finished")
    unchanged = recorded.rest("rest-jobs-unchanged")
    return {api: (active[api], finished[api], unchanged[api]) for api in unchanged}


def test_every_api_after_v0038_has_its_unchanged_answer_recorded(recorded) -> None:
    asking = [api for api in recorded.rest("rest-jobs-active") if update_time_form(api)]
    assert sorted(recorded.rest("rest-jobs-unchanged")) == sorted(asking)
    for api, (_, _, unchanged) in payloads(recorded).items():
        assert unchanged["jobs"] == [] and unchanged["last_update"]["number"] == 0, api
        assert "No job changes since" in unchanged["warnings"][0]["description"], api


async def test_a_quiet_cluster_is_asked_in_the_form_its_api_takes_and_keeps_its_list(
    recorded,
) -> None:
    for api, (active, _, unchanged) in payloads(recorded).items():
        clock = Clock()
        server = Slurmrestd(clock, active, unchanged, unchanged)
        listing = RestQueue(clock=clock)
        first = await listing.read(server, api)
        clock.now += 10
        assert await listing.read(server, api) == first, api
        assert await listing.read(server, api) == first, api
        assert len(first) == len(active["jobs"]) > 0
        assert server.asked[0] is None
        if update_time_form(api) == "epoch":
            assert server.asked[1] == {"update_time": str(stamp(active))}, api
        else:
            # 10.1 s since the kept listing's request left, 2 s of slack, 1 s more.
            assert server.asked[1] == {"update_time": "now-14"}, api
        assert listing.unchanged_answers == 2


async def test_a_change_brings_the_whole_new_list_and_the_next_question_is_from_it(
    recorded,
) -> None:
    for api, (active, finished, unchanged) in payloads(recorded).items():
        clock = Clock()
        server = Slurmrestd(clock, active, finished, unchanged)
        listing = RestQueue(clock=clock)
        await listing.read(server, api)
        clock.now += 10
        assert ids(await listing.read(server, api)) == parsed(finished, api)
        clock.now += 10
        await listing.read(server, api)
        if update_time_form(api) == "epoch":
            assert server.asked[2] == {"update_time": str(stamp(finished))}, api
        else:
            assert server.asked[2] == {"update_time": "now-14"}, api
        assert listing.unchanged_answers == 1


async def test_a_queue_whose_last_job_left_reads_empty_not_as_unchanged(recorded) -> None:
    for api, (active, _, unchanged) in payloads(recorded).items():
        emptied = copy.deepcopy(unchanged)
        emptied["last_update"]["number"] = stamp(active) + 30
        emptied["warnings"] = [{"description": "Zero jobs to dump", "source": "dump_jobs"}]
        clock = Clock()
        listing = RestQueue(clock=clock)
        server = Slurmrestd(clock, active, emptied)
        await listing.read(server, api)
        assert await listing.read(server, api) == [], api
        assert listing.unchanged_answers == 0


async def test_a_slow_answer_to_a_relative_question_is_read_again_in_full(recorded) -> None:
    relative = {a: p for a, p in payloads(recorded).items() if update_time_form(a) == "relative"}
    for api, (active, finished, unchanged) in relative.items():
        clock = Clock()
        server = Slurmrestd(clock, active, unchanged, finished, takes=2.5)
        listing = RestQueue(clock=clock)
        await listing.read(server, api)
        got = await listing.read(server, api)
        assert server.asked[1] is not None and server.asked[2] is None, api
        assert ids(got) == parsed(finished, api)
        assert listing.unchanged_answers == 0


async def test_the_list_is_read_in_full_when_kept_five_minutes(recorded) -> None:
    for api, (active, _, unchanged) in payloads(recorded).items():
        clock = Clock()
        server = Slurmrestd(clock, active, unchanged, active)
        listing = RestQueue(clock=clock)
        await listing.read(server, api)
        clock.now += FULL_READ_SECONDS - 1
        await listing.read(server, api)
        clock.now += 1
        await listing.read(server, api)
        assert server.asked[1] is not None and server.asked[2] is None, api


async def test_a_failed_read_asks_the_same_question_again(recorded) -> None:
    for api, (active, _, unchanged) in payloads(recorded).items():
        if update_time_form(api) != "epoch":
            continue
        clock = Clock()
        server = Slurmrestd(clock, active, TimeoutError("slow"), unchanged)
        listing = RestQueue(clock=clock)
        first = await listing.read(server, api)
        with pytest.raises(TimeoutError):
            await listing.read(server, api)
        assert await listing.read(server, api) == first
        assert server.asked[1] == server.asked[2] == {"update_time": str(stamp(active))}


async def test_v0038_reads_the_whole_list_every_time(recorded_2205) -> None:
    active = recorded_2205.rest("rest-jobs-active")["v0.0.38"]
    clock = Clock()
    server = Slurmrestd(clock, active, active, {"errors": [], "jobs": []})
    listing = RestQueue(clock=clock)
    await listing.read(server, "v0.0.38")
    await listing.read(server, "v0.0.38")
    # No question could be asked, so an empty answer is an empty queue.
    assert await listing.read(server, "v0.0.38") == []
    assert server.asked == [None, None, None]
