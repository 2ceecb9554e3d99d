"""``periodic.Every``: one task per event loop, a failed round reported and the next one run."""

import asyncio
import logging

from django.db import OperationalError

from a2ui.infra import jobs as periodic


async def test_one_task_per_loop_and_rounds_go_on_after_failures(caplog):
    rounds = []

    async def work():
        rounds.append(len(rounds))
        if len(rounds) == 1:
            raise OperationalError("the database went away")  # an outage: one line
        if len(rounds) == 2:
            raise ValueError("a bug")  # not an outage: its traceback

    every = periodic.Every("test round", lambda: 0.01, work)
    every.ensure_started()
    every.ensure_started()  # the same loop: still one task
    assert len(every._tasks) == 1
    task = next(iter(every._tasks.values()))
    with caplog.at_level(logging.WARNING):
        for _ in range(200):
            await asyncio.sleep(0.01)
            if len(rounds) >= 4:
                break
    task.cancel()
    assert len(rounds) >= 4
    outage = [r for r in caplog.records if "test round failed" in r.getMessage()
              and "database" in r.getMessage()]
    bug = [r for r in caplog.records if r.getMessage() == "a2ui: test round failed"]
    assert outage and bug and bug[0].exc_info[0] is ValueError


async def test_a_task_that_ended_is_started_again():
    async def work():
        pass

    every = periodic.Every("test round", lambda: 0.01, work)
    every.ensure_started()
    first = next(iter(every._tasks.values()))
    first.cancel()
    await asyncio.sleep(0)
    every.ensure_started()
    second = next(iter(every._tasks.values()))
    assert second is not first and not second.done()
    second.cancel()
