"""What an AG-UI 1.0 run holds while it waits, and that it all goes when the run ends
(docs/performance.md, "Capacity"): the request's thread is let go once the response streams
(the run's database calls go where every socket's go), the stream keeps ids rather than the
parsed request, and a run whose client went is released once it ends (AGUI_RESUME_SECONDS on),
counted until then for the collection after a mass close (``a2ui.infra.memory``)."""

import asyncio
import gc
import weakref

import pytest
from asgiref.sync import SyncToAsync, ThreadSensitiveContext

from a2ui import agents
from a2ui.agui1.stream import RunStream
from a2ui.infra import memory
from a2ui.models import AgentRun
from tests.agui1.sse import issue, start
from tests.agui1.test_agui1_resume import session_of, settled

pytestmark = pytest.mark.django_db(transaction=True)


def stream_of(run):
    """The run's ``RunStream``: the ``self`` of the response's iterator (its ``body``), under
    the wrappers middleware put around it (their ``iterable``)."""
    it = run.response._iterator
    for _ in range(10):
        found = it.ag_frame.f_locals
        if isinstance(found.get("self"), RunStream):
            return found["self"]
        it = found.get("iterable") or found["_iterator"]
    raise AssertionError("no RunStream under the response")


async def test_the_request_thread_is_let_go_once_the_run_streams(user, agent):
    token = await issue(user, agent)
    request = ThreadSensitiveContext()  # as Django's ASGI handler serves a request
    async with request:
        run = await start(token, "r1")
        executor = SyncToAsync.context_to_thread_executor.get(request)
        assert executor is not None  # the view's database calls ran on the request's thread
        threads = list(executor._threads)
        assert (await run.next())["type"] == "RUN_STARTED"
        assert request not in SyncToAsync.context_to_thread_executor
        sid = await session_of("r1")
        await agents.afinish_run(agent, sid, "r1", {"ok": True})
        rest = await run.rest()
        assert rest[-1]["type"] == "RUN_FINISHED"
        # The stream's own calls (its end, the run's row) made no thread for the request.
        assert request not in SyncToAsync.context_to_thread_executor
    for _ in range(100):
        if not any(t.is_alive() for t in threads):
            break
        await asyncio.sleep(0.02)
    assert threads and not any(t.is_alive() for t in threads)


async def test_a_run_keeps_ids_not_the_request(user, agent):
    token = await issue(user, agent)
    run = await start(token, "r1", text="x" * 5000)
    assert (await run.next())["type"] == "RUN_STARTED"
    stream = stream_of(run)
    assert not hasattr(stream.ctx.run_input, "model")  # the parsed body is not kept
    assert stream.ctx.run_input.run_id == "r1"
    assert stream.ctx.session.session_id == stream.session_id
    assert stream.ctx.plan == []
    await agents.afinish_run(agent, await session_of("r1"), "r1")
    await run.rest()


async def test_a_run_whose_client_went_is_released_once_it_ends(settings, user, agent):
    settings.A2UI = {**getattr(settings, "A2UI", {}), "AGUI_RESUME_SECONDS": 1}
    token = await issue(user, agent)
    counted = memory.counts.open
    run = await start(token, "r1")
    assert (await run.next())["type"] == "RUN_STARTED"
    stream = weakref.ref(stream_of(run))
    assert memory.counts.open == counted + 1  # the run, while its stream lives
    await run.close()
    del run
    gc.collect()
    assert stream() is not None  # its client went: the run goes on without it
    assert memory.counts.open == counted + 1
    ended = await settled("r1", AgentRun.Status.CANCELLED)
    assert ended["outcome"]["reason"] == "client_gone"
    for _ in range(100):
        if memory.counts.open == counted:
            break
        await asyncio.sleep(0.02)
    assert memory.counts.open == counted  # uncounted: the collection after a mass close
    for _ in range(50):
        gc.collect()
        if stream() is None:
            break
        await asyncio.sleep(0.02)
    assert stream() is None  # nothing of the run is left


async def test_a_streaming_run_keeps_no_copy_of_its_body(monkeypatch, user, agent):
    """Served by Django's ASGI handler as under Daphne: once the run streams, its body file
    (which the handler keeps until the response ends) is empty and the request holds no
    ``body``: a run's body carries the whole conversation, up to MAX_PAYLOAD_SIZE."""
    import json
    import tempfile

    from django.core.handlers import asgi as django_asgi
    from django.core.handlers.asgi import ASGIHandler, ASGIRequest

    files = []

    class Recorded(tempfile.SpooledTemporaryFile):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            files.append(self)

    monkeypatch.setattr(django_asgi.tempfile, "SpooledTemporaryFile", Recorded)
    token = await issue(user, agent)
    history = [{"id": f"m{i}", "role": "user", "content": "x" * 1000} for i in range(50)]
    body = json.dumps({"threadId": "t-big", "runId": "r-big", "messages": history}).encode()
    received = asyncio.Queue()
    for message in ({"type": "http.request", "body": body[:20000], "more_body": True},
                    {"type": "http.request", "body": body[20000:], "more_body": False}):
        received.put_nowait(message)
    sent = asyncio.Queue()
    scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1",
             "method": "POST", "scheme": "http", "path": "/api/v4/agui/run",
             "raw_path": b"/api/v4/agui/run", "query_string": b"", "root_path": "",
             "headers": [(b"host", b"testserver"), (b"content-type", b"application/json"),
                         (b"content-length", str(len(body)).encode()),
                         (b"authorization", f"Bearer {token}".encode())],
             "client": ("127.0.0.1", 50000), "server": ("testserver", 80)}
    served = asyncio.ensure_future(ASGIHandler()(scope, received.get, sent.put))
    try:
        start = await asyncio.wait_for(sent.get(), 10)
        assert start["status"] == 200, start
        chunk = await asyncio.wait_for(sent.get(), 10)
        assert b"RUN_STARTED" in chunk["body"]
        assert len(files) == 1 and files[0].tell() == 0
        assert files[0]._file.getbuffer().nbytes == 0  # emptied, still open for the handler
        # type(), not isinstance(): isinstance() of a lazy object (another test's
        # ``request.user``) evaluates it
        requests = [o for o in gc.get_objects()
                    if type(o) is ASGIRequest and o.path == "/api/v4/agui/run"]
        assert requests and all("_body" not in vars(r) for r in requests)
    finally:
        await received.put({"type": "http.disconnect"})
        await asyncio.wait_for(served, 10)
    await agents.afinish_run(agent, await session_of("r-big"), "r-big")
