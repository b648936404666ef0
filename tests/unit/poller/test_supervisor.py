"""Supervised background tasks: contained, counted, started again after a growing back-off."""

from __future__ import annotations

import asyncio
import json

import pytest

from app.observability.serve import answer
from app.observability.supervisor import Backoff, TaskBoard, supervise

QUICK = Backoff(first=0.01, longest=0.04, healthy_after=60.0)


async def test_a_failing_task_is_started_again_and_its_neighbour_keeps_running() -> None:
    board, stop = TaskBoard(), asyncio.Event()
    starts = 0
    neighbour_turns = 0

    async def failing() -> None:
        nonlocal starts
        starts += 1
        raise UnicodeEncodeError("ascii", "bücher", 1, 2, "ordinal not in range(128)")

    async def neighbour() -> None:
        nonlocal neighbour_turns
        while not stop.is_set():
            neighbour_turns += 1
            await asyncio.sleep(0.005)

    async with asyncio.TaskGroup() as group:
        group.create_task(supervise("poller:a", failing, stop, board, QUICK))
        group.create_task(supervise("poller:b", neighbour, stop, board, QUICK))
        while starts < 4:
            await asyncio.sleep(0.005)
        turns_then = neighbour_turns
        await asyncio.sleep(0.05)
        assert neighbour_turns > turns_then
        stop.set()
    health = board.describe()
    assert health["poller:a"]["crashes"] == starts
    assert health["poller:a"]["last_error"].startswith("UnicodeEncodeError: 'ascii' codec")
    assert health["poller:b"] == {
        "running": False,
        "crashes": 0,
        "last_error": None,
        "last_crash_at": None,
    }


def test_the_back_off_doubles_up_to_its_longest() -> None:
    backoff = Backoff(first=1.0, longest=60.0)
    assert [backoff.delay(n) for n in (1, 2, 3, 4, 7, 50)] == [1, 2, 4, 8, 60, 60]


async def test_a_task_that_returns_without_being_asked_counts_as_a_failure() -> None:
    board, stop = TaskBoard(), asyncio.Event()
    runs = 0

    async def returns() -> None:
        nonlocal runs
        runs += 1
        if runs == 2:
            stop.set()

    await asyncio.wait_for(supervise("dispatcher", returns, stop, board, QUICK), 5)
    assert runs == 2
    assert board.describe()["dispatcher"]["crashes"] == 1
    assert board.describe()["dispatcher"]["last_error"] == "ended on its own"


async def test_cancellation_still_ends_a_supervised_task() -> None:
    board = TaskBoard()

    async def forever() -> None:
        await asyncio.Event().wait()

    task = asyncio.create_task(supervise("poller:x", forever, asyncio.Event(), board, QUICK))
    await asyncio.sleep(0.01)
    assert board.describe()["poller:x"]["running"] is True
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert board.describe()["poller:x"]["running"] is False
    assert board.describe()["poller:x"]["crashes"] == 0


def test_the_standalone_pollers_healthz_lists_its_tasks() -> None:
    board = TaskBoard()
    board.started("poller:a")
    board.crashed("notifications", RuntimeError("boom"))
    response = answer("GET /healthz HTTP/1.1", lambda: {"tasks": board.describe()})
    head, body = response.split(b"\r\n\r\n", 1)
    assert b"application/json" in head
    tasks = json.loads(body)["tasks"]
    assert tasks["poller:a"]["running"] is True
    assert tasks["notifications"]["last_error"] == "RuntimeError: boom"
