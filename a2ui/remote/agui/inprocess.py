"""AG-UI agents in this process (``A2UI['AGENTS']``): no HTTP hop.

* An ASGI app (pydantic-ai's ``AGUIApp``, a Starlette or FastAPI app of ``ag-ui-langgraph`` or
  ``ag-ui-adk``...): called directly with the POST of ``RunAgentInput``, its response body read
  as it is sent (httpx's ``ASGITransport`` would buffer the whole response), at most
  :data:`QUEUE` chunks ahead of the reader (the app waits meanwhile). When the run ends or is
  stopped the app is told the client went (``http.disconnect``) and its task is cancelled.
* An async run function ``f(run_input) -> async iterator of AG-UI events`` (``ag_ui.core``
  models or their dicts), or a coroutine returning one.
"""

import asyncio
import contextlib
import importlib
import inspect
import json

from ag_ui.core import BaseEvent

from a2ui.remote.agui import mapping
from a2ui.remote.clients import UpstreamError

QUEUE = 64
_DONE = object()


def load(spec):
    """The object named by ``spec``: ``"module:attribute"`` (or ``"module.attribute"``)."""
    module, sep, attribute = spec.partition(":")
    if not sep:
        module, _, attribute = spec.rpartition(".")
    target = importlib.import_module(module)
    for part in attribute.split("."):
        target = getattr(target, part)
    return target


def is_asgi(target):
    """An ASGI app (a callable of three arguments), not a run function of one."""
    if not callable(target):
        return False
    call = target if inspect.isfunction(target) or inspect.ismethod(target) else (
        target.__call__)
    try:
        parameters = inspect.signature(call).parameters.values()
    except (TypeError, ValueError):
        return True
    positional = [p for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return len(positional) >= 3


def _scope(path, headers):
    return {"type": "http", "asgi": {"version": "3.0", "spec_version": "2.3"},
            "http_version": "1.1", "method": "POST", "scheme": "http", "path": path,
            "raw_path": path.encode("latin-1"), "query_string": b"", "root_path": "",
            "headers": [(k.lower().encode("latin-1"), v.encode("latin-1"))
                        for k, v in headers.items()],
            "client": ("127.0.0.1", 0), "server": ("a2ui.inprocess", 80), "state": {}}


async def asgi_stream(target, body, headers, limits, path="/"):
    """The response body chunks of POSTing ``body`` to the ASGI app ``target``."""
    queue = asyncio.Queue(QUEUE)
    gone = asyncio.Event()
    sent = False

    async def receive():
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        await gone.wait()
        return {"type": "http.disconnect"}

    async def send(message):
        if gone.is_set():
            raise OSError("the reader went")
        await queue.put(message)

    async def call():
        try:
            await target(_scope(path, headers), receive, send)
        finally:
            with contextlib.suppress(asyncio.QueueFull):
                queue.put_nowait(_DONE)

    task = asyncio.ensure_future(call())

    async def get():
        message = await asyncio.wait_for(queue.get(), limits.idle_seconds)
        if message is _DONE:
            if task.done() and not task.cancelled() and task.exception() is not None:
                raise UpstreamError(f"The agent failed ({type(task.exception()).__name__}).",
                                    "agent_error")
            raise UpstreamError("The agent's stream ended before its run finished.",
                                "incomplete")
        return message

    try:
        try:
            start = await get()
        except TimeoutError:
            raise UpstreamError("The agent did not answer in time.", "timeout") from None
        if start.get("type") != "http.response.start":
            raise UpstreamError("The agent did not start a response.", "malformed")
        status = start.get("status", 0)
        if not 200 <= status < 300:
            raise UpstreamError(f"The agent answered HTTP {status}.", "http_status")
        kind = dict(start.get("headers") or ()).get(b"content-type", b"").split(b";")[0]
        if kind.strip().lower() != b"text/event-stream":
            raise UpstreamError("The agent did not answer with an event stream.", "malformed")
        while True:
            try:
                message = await get()
            except TimeoutError:
                raise UpstreamError("The agent sent nothing for too long.", "timeout") from None
            if message.get("type") != "http.response.body":
                continue
            chunk = message.get("body", b"")
            if chunk:
                yield bytes(chunk)
            if not message.get("more_body", False):
                return
    finally:
        gone.set()
        if not task.done():
            task.cancel()
        with contextlib.suppress(BaseException):
            await task


async def run_function(target, run_input, limits):
    """The events of an async run function ``target(run_input)``."""
    result = target(run_input)
    if inspect.isawaitable(result):
        result = await result
    if not hasattr(result, "__aiter__"):
        raise UpstreamError("The agent's run function returned no async iterator.",
                            "malformed")
    iterator = result.__aiter__()
    try:
        while True:
            try:
                item = await asyncio.wait_for(iterator.__anext__(), limits.idle_seconds)
            except StopAsyncIteration:
                return
            except TimeoutError:
                raise UpstreamError("The agent sent nothing for too long.", "timeout") from None
            except UpstreamError:
                raise
            except Exception as exc:
                raise UpstreamError(f"The agent failed ({type(exc).__name__}).",
                                    "agent_error") from None
            if isinstance(item, BaseEvent):
                item = item.model_dump(mode="json", by_alias=True)
            if not isinstance(item, dict):
                raise UpstreamError("The agent's run function yielded something that is not "
                                    "an AG-UI event.", "malformed")
            try:
                yield mapping.parse(json.dumps(item))
            except (mapping.Malformed, TypeError, ValueError) as exc:
                raise UpstreamError(f"The agent sent {exc}.", "malformed") from None
    finally:
        closing = getattr(iterator, "aclose", None)
        if closing is not None:
            with contextlib.suppress(Exception):
                await closing()
