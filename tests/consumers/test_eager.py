"""``a2ui.consumers.eager.start``: a coroutine run in the caller's turn, a task only if it waits,
and then the same outcome a task would have given it."""

import asyncio
import contextvars

import pytest

from a2ui.consumers import eager

seen = contextvars.ContextVar("seen", default=None)


async def test_a_coroutine_that_never_waits_runs_now_and_makes_no_task():
    ran = []

    async def quick():
        ran.append(seen.get())

    seen.set("caller's")
    before = len(asyncio.all_tasks())
    assert eager.start(quick()) is None
    assert ran == ["caller's"]  # in the caller's turn and context
    assert len(asyncio.all_tasks()) == before


async def test_one_that_waits_is_finished_by_a_task_with_what_it_waited_for():
    loop = asyncio.get_running_loop()
    first, second = loop.create_future(), loop.create_future()
    got = []

    async def waits():
        got.append("started")
        got.append(await first)
        await asyncio.sleep(0)  # a bare yield
        try:
            await second
        except KeyError as exc:
            got.append(f"raised {exc}")
        return "done"

    task = eager.start(waits())
    assert got == ["started"] and task is not None and not task.done()
    first.set_result("value")
    await asyncio.sleep(0.01)
    assert got == ["started", "value"]
    second.set_exception(KeyError("k"))
    await asyncio.wait_for(task, 1)
    assert got == ["started", "value", "raised 'k'"]


async def test_an_exception_before_it_waits_is_the_callers():
    async def broken():
        raise ValueError("at once")

    with pytest.raises(ValueError):
        eager.start(broken())


async def test_cancelling_the_task_cancels_the_coroutine():
    cleaned = []
    never = asyncio.get_running_loop().create_future()

    async def forever():
        try:
            await never
        finally:
            cleaned.append(True)

    task = eager.start(forever())
    await asyncio.sleep(0)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert cleaned == [True]


async def test_it_waits_on_tasks_and_sleeps_too():
    async def child():
        await asyncio.sleep(0.01)
        return 3

    async def parent():
        return await asyncio.ensure_future(child()) + await asyncio.sleep(0.01, result=4)

    out = []

    async def record():
        out.append(await parent())

    await asyncio.wait_for(eager.start(record()), 1)
    assert out == [7]
