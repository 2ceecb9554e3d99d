"""Run a coroutine at once, in the caller's turn, and give it a task only if it waits.

Why: handing an event to a socket (render it, write the frame) rarely waits for anything, and a
task per socket per event costs its creation and an event-loop turn. Python 3.12 has eager tasks
(``asyncio.eager_task_factory``) for this; on 3.11 :func:`start` does the same for one
coroutine: it runs it up to its first suspension, and only then wraps the rest in a task that
resumes it the way a task would have (the future it waits on, then ``send``).

The coroutine runs in the caller's context (contextvars) up to that point, as an eager task
does; an exception it raises before suspending propagates to the caller.
"""

import asyncio


def start(coro):
    """Run ``coro`` now; returns None if it finished, else the task that finishes it."""
    done, value = run(coro)
    return None if done else value


def run(coro):
    """Run ``coro`` now: ``(True, its result)`` if it finished, else ``(False, the task that
    finishes it)`` (whose result is the coroutine's)."""
    try:
        waiting = coro.send(None)
    except StopIteration as stop:
        return True, stop.value
    return False, asyncio.get_running_loop().create_task(_resume(coro, waiting))


async def _resume(coro, waiting):
    """Drive ``coro`` from a suspension at ``waiting`` (what it yielded) to its end."""
    while True:
        try:
            if waiting is None:  # a bare yield (``asyncio.sleep(0)``): one turn
                await asyncio.sleep(0)
            else:
                # The coroutine's own await marked the future as waited on (a task clears the
                # mark when it takes the future): cleared, so this await may wait on it.
                waiting._asyncio_future_blocking = False
                await waiting
        except asyncio.CancelledError:
            if waiting is None or not waiting.cancelled():  # this task was cancelled: pass it on
                try:
                    waiting = coro.throw(asyncio.CancelledError())
                except StopIteration as stop:
                    return stop.value
                continue
        except BaseException:  # noqa: S110 - the coroutine reads the outcome itself, next
            pass
        try:
            waiting = coro.send(None)
        except StopIteration as stop:
            return stop.value
