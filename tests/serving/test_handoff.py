"""A long response's body handed off in front of Django (``a2ui.handoff``): Django ends the
request as for any response (its request object, tasks and thread gone) and the layer sends the
body; a client that leaves closes the body; a response put in the view's place is sent as it is,
and the body closed unread."""

import asyncio
import contextvars
import gc
import weakref

import pytest
from asgiref.local import _Storage
from asgiref.testing import ApplicationCommunicator
from django.core.asgi import get_asgi_application
from django.core.signals import request_finished
from django.http import JsonResponse
from django.urls import path

from a2ui import handoff

SEEN = {}


def body(name, chunks=(b"data: 1\n\n", "data: 2\n\n"), then=None):
    """A body that records what happened to it in SEEN[name]."""
    record = SEEN.setdefault(name, [])

    async def gen():
        SEEN[f"{name}-context"] = contextvars.copy_context()  # where the body is sent from
        try:
            for chunk in chunks:
                record.append("sent")
                yield chunk
            if then is not None:
                await then()
        except asyncio.CancelledError:
            record.append("cancelled")
            raise
        finally:
            record.append("closed")

    return gen()


async def streamed(request):
    SEEN["request"] = weakref.ref(request)
    return handoff.event_stream(body("streamed"))


async def forever(request):
    SEEN["request"] = weakref.ref(request)
    return handoff.event_stream(body("forever", then=asyncio.Event().wait))


async def broken(request):
    async def fail():
        raise RuntimeError("the stream broke")

    return handoff.event_stream(body("broken", then=fail))


async def replaced(request):
    """A response that a middleware (or the view itself) put in place of the stream's."""
    handoff.event_stream(body("replaced"))
    return JsonResponse({"error": "refused"}, status=403)


async def slow(request):
    response = handoff.event_stream(body("slow"))
    await asyncio.sleep(30)  # the client leaves meanwhile: Django cancels the view
    return response


urlpatterns = [path(f"{view.__name__}", view)
               for view in (streamed, forever, broken, replaced, slow)]


@pytest.fixture
def app(settings):
    settings.ROOT_URLCONF = __name__
    SEEN.clear()
    return handoff.StreamHandoff(get_asgi_application())


def request(app, name, method="GET"):
    return ApplicationCommunicator(app, {
        "type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": method,
        "scheme": "http", "path": f"/{name}", "raw_path": f"/{name}".encode(),
        "query_string": b"", "root_path": "", "headers": [(b"host", b"testserver")],
        "client": ("127.0.0.1", 1234), "server": ("testserver", 80)})


async def started(comm):
    await comm.send_input({"type": "http.request", "body": b"", "more_body": False})
    return await comm.receive_output(5)


async def test_the_body_is_sent_once_django_has_ended_the_request(app):
    finished = []

    def on_finished(**kwargs):
        finished.append(len(SEEN.get("streamed", ())))

    request_finished.connect(on_finished)
    try:
        comm = request(app, "streamed")
        start = await started(comm)
        chunks = [await comm.receive_output(5) for _ in range(3)]
    finally:
        request_finished.disconnect(on_finished)
    assert start["status"] == 200
    headers = {k.lower(): v for k, v in start["headers"]}
    assert headers[b"content-type"] == b"text/event-stream"
    assert headers[b"cache-control"] == b"no-cache"
    # Django's empty stand-in said nothing of the stream: no mark, no Content-Length: 0.
    assert handoff.MARK.lower().encode() not in headers and b"content-length" not in headers
    assert [c["body"] for c in chunks] == [b"data: 1\n\n", b"data: 2\n\n", b""]
    assert [c.get("more_body", False) for c in chunks] == [True, True, False]
    assert finished == [0]  # the request ended before the body's first chunk
    assert SEEN["streamed"] == ["sent", "sent", "closed"]
    await comm.wait(5)


async def test_nothing_of_the_request_is_held_while_the_body_streams(app):
    comm = request(app, "forever")
    await started(comm)
    for _ in range(2):
        await comm.receive_output(5)
    gc.collect()
    assert SEEN["request"]() is None  # Django's request object is gone
    tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
    # The application's task and the one waiting for the client to leave: none of Django's.
    assert len(tasks) == 2, tasks
    # Nor what Django's handler left in its context (asgiref's copies of its Locals' storages).
    context = SEEN["forever-context"]
    assert not [v for v in context.values() if isinstance(v, _Storage)]
    assert handoff._slot not in context
    await comm.send_input({"type": "http.disconnect"})
    await comm.wait(5)
    assert SEEN["forever"] == ["sent", "sent", "cancelled", "closed"]


async def test_a_client_that_leaves_closes_the_body(app):
    comm = request(app, "forever")
    await started(comm)
    await comm.receive_output(5)
    await comm.send_input({"type": "http.disconnect"})
    await comm.wait(5)  # the application ends by itself, without an error
    assert SEEN["forever"][-2:] == ["cancelled", "closed"]


async def test_a_response_put_in_the_streams_place_is_sent_and_the_body_closed(app):
    comm = request(app, "replaced")
    start = await started(comm)
    assert start["status"] == 403
    assert handoff.MARK.lower().encode() not in dict(start["headers"])
    assert (await comm.receive_output(5))["body"] == b'{"error": "refused"}'
    await comm.wait(5)
    assert SEEN["replaced"] == []  # closed unread (a generator never started runs nothing)
    assert await comm.receive_nothing()


async def test_a_client_gone_before_the_view_answered_gets_nothing(app):
    comm = request(app, "slow")
    await comm.send_input({"type": "http.request", "body": b""})
    await asyncio.sleep(0.1)
    await comm.send_input({"type": "http.disconnect"})
    await comm.wait(5)
    assert await comm.receive_nothing()
    assert SEEN["slow"] == []


async def test_a_body_that_fails_ends_the_response(app, caplog):
    comm = request(app, "broken")
    await started(comm)
    chunks = [await comm.receive_output(5) for _ in range(3)]
    assert chunks[-1] == {"type": "http.response.body", "body": b"", "more_body": False}
    await comm.wait(5)
    assert "a handed-off stream failed" in caplog.text
    assert SEEN["broken"][-1] == "closed"


async def test_the_servers_own_cancel_is_not_swallowed(app):
    comm = request(app, "forever")
    await started(comm)
    await comm.receive_output(5)
    comm.future.cancel()
    with pytest.raises(asyncio.CancelledError):
        await comm.future
    assert SEEN["forever"][-1] == "closed"


async def test_without_the_layer_the_response_streams_through_django(settings):
    settings.ROOT_URLCONF = __name__
    SEEN.clear()
    comm = request(get_asgi_application(), "streamed")
    start = await started(comm)
    assert start["status"] == 200
    assert handoff.MARK.lower().encode() not in dict(start["headers"])
    bodies = [(await comm.receive_output(5)).get("body", b"") for _ in range(3)]
    assert bodies == [b"data: 1\n\n", b"data: 2\n\n", b""]
    await comm.wait(5)
