"""What an idle MCP person client holds in the process, and that it is all given back (issue 28,
"Capacity": 120.9 KB per idle client at 10,000; docs/performance.md).

An idle client of the handshake era: ``initialize``, ``notifications/initialized``, then the
GET stream of the server's notifications held open; ``DELETE`` when it leaves.
``a2ui.mcp.transport.Transport`` serves it with three tasks (the SDK's transport ran eight);
authentication leaves no ``asgiref`` storage in the request's context; a session DELETEd, or
left idle for ``session_idle_timeout``, leaves nothing behind in the session manager, and its
transport and loop are freed.
"""

import asyncio
import contextvars
import gc
import json
import uuid
import weakref

import anyio
import pytest

from a2ui import tokens
from tests.fuzz.mcp import INIT_BODY, MCP_HEADERS, PROTOCOL_VERSION, AsgiHttp

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def person_token(user, agent):
    return tokens.issue_stream_token(user, agent, "stream_mcp").token


def build(settings, **options):
    from a2ui.mcp.app import MCPApp
    from a2ui.mcp.server import build_server

    options.setdefault("max_request_body_size", 4096)
    return MCPApp(build_server(), settings.ALLOWED_HOSTS, **options)


def headers_of(credential, session_id=None):
    headers = {**MCP_HEADERS, "Authorization": f"Bearer {credential}"}
    if session_id:
        headers.update({"Mcp-Session-Id": session_id, "Mcp-Protocol-Version": PROTOCOL_VERSION})
    return headers


class GetStream:
    """A client's GET stream, open in a task until :meth:`hang_up`."""

    def __init__(self, app, credential, session_id):
        raw = [(k.lower().encode(), v.encode()) for k, v in headers_of(credential,
                                                                       session_id).items()]
        raw += [(b"host", b"localhost"), (b"accept", b"text/event-stream")]
        self.scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1",
                      "method": "GET", "scheme": "http", "path": "/mcp", "raw_path": b"/mcp",
                      "query_string": b"", "root_path": "", "headers": raw,
                      "client": ("127.0.0.1", 50000), "server": ("localhost", 80)}
        self.start = asyncio.get_running_loop().create_future()
        self.chunks, self.ended, self.gone = [], asyncio.Event(), asyncio.Event()
        self.task = asyncio.ensure_future(app(self.scope, self.receive, self.send))

    async def receive(self):
        if not self.gone.is_set() and not getattr(self, "read", False):
            self.read = True
            return {"type": "http.request", "body": b"", "more_body": False}
        await self.gone.wait()
        return {"type": "http.disconnect"}

    async def send(self, message):
        if message["type"] == "http.response.start":
            self.start.set_result(message)
        elif message["type"] == "http.response.body":
            self.chunks.append(message.get("body", b""))
            if not message.get("more_body"):
                self.ended.set()

    async def hang_up(self):
        self.gone.set()
        await asyncio.wait_for(self.task, 5)


async def open_client(app, http, credential):
    """An idle client: initialized, its GET stream open (status 200 read)."""
    response = await http.request("POST", headers_of(credential), json.dumps(INIT_BODY).encode())
    assert response.status == 200, response.text
    session_id = response.headers["mcp-session-id"]
    response = await http.request("POST", headers_of(credential, session_id), json.dumps(
        {"jsonrpc": "2.0", "method": "notifications/initialized"}).encode())
    assert response.status == 202, response.text
    stream = GetStream(app, credential, session_id)
    start = await asyncio.wait_for(stream.start, 5)
    assert start["status"] == 200
    return session_id, stream


def leftovers(app):
    manager = app.manager
    return {"sessions": dict(manager._server_instances), "owners": dict(manager._session_owners),
            "leases": dict(manager._leases)}


async def collected(refs, seconds=5.0):
    """True once every weak reference in ``refs`` is dead (the objects were freed)."""
    for _ in range(int(seconds / 0.05)):
        gc.collect()
        if all(ref() is None for ref in refs):
            return True
        await asyncio.sleep(0.05)
    return False


async def test_an_idle_client_takes_three_tasks_and_its_get_stream_speaks_sse(settings, person_token):
    app = build(settings)
    http = AsgiHttp(app)
    try:
        first = [await open_client(app, http, person_token)]  # and the process's first use
        await asyncio.sleep(0.1)
        before = len(asyncio.all_tasks())
        opened = [await open_client(app, http, person_token) for _ in range(3)]
        await asyncio.sleep(0.1)
        # Per client: the session's loop, the GET request's and the one that waits for its
        # client to leave. The SDK's transport ran eight: a message router beside the loop,
        # and five (sse-starlette's) beside the GET request's.
        assert (len(asyncio.all_tasks()) - before) / len(opened) <= 3
        session_id, stream = opened[0]
        start = stream.start.result()
        headers = dict(start["headers"])
        assert headers[b"content-type"] == b"text/event-stream"
        assert headers[b"cache-control"] == b"no-cache, no-transform"
        assert headers[b"mcp-session-id"] == session_id.encode()
        assert headers[b"x-accel-buffering"] == b"no"
        # A notification of the server goes to the GET stream as an SSE event.
        transport = app.manager._server_instances[session_id]
        from mcp.server.streamable_http import GET_STREAM_KEY, EventMessage
        from mcp_types import JSONRPCNotification

        await transport._request_streams[GET_STREAM_KEY][0].send(EventMessage(
            JSONRPCNotification(jsonrpc="2.0", method="notifications/resources/list_changed"),
            "7-ab"))
        event = b"".join(stream.chunks).decode()
        assert event == ("id: 7-ab\r\nevent: message\r\ndata: {\"jsonrpc\":\"2.0\",\"method\":"
                         "\"notifications/resources/list_changed\"}\r\n\r\n")
        # A second GET stream of the session is refused, as the SDK refuses it.
        second = GetStream(app, person_token, session_id)
        assert (await asyncio.wait_for(second.start, 5))["status"] == 409
        await second.hang_up()
        for _, one in first + opened:
            await one.hang_up()
    finally:
        await app.runner.stop()


async def test_clients_deleted_leave_nothing_behind(settings, person_token):
    app = build(settings)
    http = AsgiHttp(app)
    try:
        opened = [await open_client(app, http, person_token) for _ in range(5)]
        refs = []
        for session_id, _ in opened:
            transport = app.manager._server_instances[session_id]
            refs.append(weakref.ref(transport))
            refs.append(weakref.ref(transport.idle_scope))  # the session loop's scope
        del transport
        assert len(leftovers(app)["sessions"]) == 5
        for session_id, stream in opened:
            response = await http.request("DELETE", headers_of(person_token, session_id))
            assert response.status == 200, response.text
            # The session's end ends its GET stream.
            await asyncio.wait_for(stream.ended.wait(), 5)
            await stream.hang_up()
        assert leftovers(app) == {"sessions": {}, "owners": {}, "leases": {}}
        assert await collected(refs), "a DELETEd session's transport or streams are still alive"
        response = await http.request("GET", headers_of(person_token, opened[0][0]))
        assert response.status == 404
    finally:
        await app.runner.stop()


async def test_a_client_that_leaves_without_delete_is_dropped_when_idle(settings, person_token):
    app = build(settings, session_idle_timeout=0.3)
    http = AsgiHttp(app)
    try:
        session_id, stream = await open_client(app, http, person_token)
        ref = weakref.ref(app.manager._server_instances[session_id])
        await asyncio.sleep(0.6)  # the open GET stream holds the session
        assert session_id in app.manager._server_instances
        await stream.hang_up()  # the client leaves, no DELETE
        for _ in range(100):
            if not app.manager._server_instances:
                break
            await asyncio.sleep(0.05)
        assert leftovers(app) == {"sessions": {}, "owners": {}, "leases": {}}
        assert await collected([ref]), "an idle session's transport is still alive"
    finally:
        await app.runner.stop()


async def test_authentication_leaves_no_storage_in_the_requests_context(user, person_token):
    from asgiref.local import Local

    from a2ui.mcp.app import _authenticate

    scope = {"headers": [(b"authorization", f"Bearer {person_token}".encode())]}
    local = Local()

    async def request():
        local.value = 1  # a Local with a storage in the request's context, as Django's have
        before = dict(contextvars.copy_context())
        principal = await _authenticate(scope)
        assert principal.kind == "person" and principal.token.user_id == user.id
        after = dict(contextvars.copy_context())
        return {var.name for var, value in after.items() if before.get(var) is not value}

    # A database call copies into its caller's context a new storage of every Local there
    # (Django's: about 4 KB, kept as long as the request is, the GET stream for hours).
    changed = await asyncio.get_running_loop().create_task(request(),
                                                           context=contextvars.Context())
    assert changed == set()


def inbound():
    from a2ui.mcp.transport import _Inbound, _InboundReceive, _InboundSend

    state = _Inbound()
    return _InboundSend(state), _InboundReceive(state)


async def test_the_inbound_stream_hands_each_message_over_with_its_senders_context():
    send, receive = inbound()
    var = contextvars.ContextVar("who")

    async def sender(name):
        var.set(name)
        await send.send(name)
        return name

    first = asyncio.ensure_future(sender("a"))
    second = asyncio.ensure_future(sender("b"))
    await asyncio.sleep(0.01)
    assert not first.done() and not second.done()  # a send waits until it is received
    assert await receive.receive() == "a" and receive.last_context[var] == "a"
    assert await first == "a" and not second.done()
    assert await receive.receive() == "b" and receive.last_context[var] == "b"
    assert await second == "b"
    waiting = asyncio.ensure_future(receive.receive())
    await asyncio.sleep(0.01)
    await send.send("c")  # a waiting receiver takes it at once
    assert await waiting == "c"


async def test_the_inbound_stream_ends_as_the_sdks_memory_streams_do():
    send, receive = inbound()
    waiting = asyncio.ensure_future(receive.__anext__())
    await asyncio.sleep(0.01)
    await send.aclose()  # the sending end closed: the iteration ends
    with pytest.raises(StopAsyncIteration):
        await waiting
    with pytest.raises(anyio.ClosedResourceError):
        await send.send("late")

    send, receive = inbound()
    pending = asyncio.ensure_future(send.send("x"))
    await asyncio.sleep(0.01)
    await receive.aclose()  # the receiving end closed: a waiting send fails, and a new one
    with pytest.raises(anyio.BrokenResourceError):
        await pending
    with pytest.raises(anyio.BrokenResourceError):
        await send.send("y")
    with pytest.raises(anyio.ClosedResourceError):
        await receive.receive()


async def test_a_cancelled_receive_loses_no_message():
    send, receive = inbound()
    waiting = asyncio.ensure_future(receive.receive())
    await asyncio.sleep(0.01)
    await send.send("kept")  # handed over...
    waiting.cancel()  # ...but its receiver is cancelled before it runs
    with pytest.raises(asyncio.CancelledError):
        await waiting
    assert await receive.receive() == "kept"


async def test_outbound_messages_are_routed_in_order_even_if_their_sender_is_cancelled():
    from mcp.shared.message import SessionMessage
    from mcp_types import JSONRPCNotification

    from a2ui.mcp.transport import Transport

    routed = []

    class Slow(Transport):
        async def _route(self, session_message):
            await asyncio.sleep(0.02)
            routed.append(session_message.message.method)

    transport = Slow(mcp_session_id="s1")
    async with transport.connect() as (_, write):
        def note(n):
            return SessionMessage(JSONRPCNotification(jsonrpc="2.0", method=f"n{n}"))

        scope = anyio.CancelScope()

        async def first():
            with scope:  # the SDK cancels a handler by its scope
                await write.send(note(0))

        senders = [asyncio.ensure_future(first())]
        senders += [asyncio.ensure_future(write.send(note(n))) for n in (1, 2)]
        await asyncio.sleep(0.005)
        scope.cancel()  # while its message is being routed: it still is
        await asyncio.gather(*senders)
        assert routed == ["n0", "n1", "n2"] and scope.cancel_called
    with pytest.raises(anyio.ClosedResourceError):
        await write.send(note(3))


async def test_gone_is_an_event_that_holds_a_future_only_while_waited_on():
    from a2ui.mcp.app import Gone

    gone = Gone()
    assert not gone.is_set() and gone.waiter is None
    first = asyncio.ensure_future(gone.wait())
    second = asyncio.ensure_future(gone.wait())
    await asyncio.sleep(0.01)
    first.cancel()  # one waiter leaving does not end the others' wait
    await asyncio.sleep(0.01)
    assert not second.done()
    gone.set()
    assert await second is True and gone.is_set() and await gone.wait() is True


async def test_an_idle_client_keeps_neither_its_callers_rows_nor_finished_requests(
        settings, person_token):
    from a2ui.mcp.app import Principal
    from a2ui.models import StreamToken as Token

    app = build(settings)
    http = AsgiHttp(app)
    try:
        _, stream = await open_client(app, http, person_token)
        await asyncio.sleep(0.1)
        gc.collect()
        # The GET stream runs no handler, and the session's last message, the client's
        # notifications/initialized, is kept without its request's caller and receive.
        # Only this client's (another test's leftovers may be alive in this process).
        jti = uuid.UUID(str(tokens.peek_stream_token(person_token, "stream_mcp")))
        # type(), not isinstance(): a dead weakref.proxy among them raises on isinstance.
        alive = gc.get_objects()
        assert [o for o in alive if type(o) is Token and o.jti == jti] == []
        assert [o for o in alive if type(o) is Principal and o.token is not None
                and o.token.jti == jti] == []
        assert [o for o in alive if type(o) is dict and o.get("type") == "http"
                and o.get("method") == "POST" and getattr(o.get("a2ui_mcp"), "token", None)
                is not None and o["a2ui_mcp"].token.jti == jti] == []
        await stream.hang_up()
    finally:
        await app.runner.stop()
