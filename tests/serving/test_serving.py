"""How Daphne is built for the app (a2ui.serving, ``manage.py a2ui_serve``); the live tests in
tests/live/test_live_payload_limits.py show the limits on real sockets."""

import pytest
from django.core.management import CommandError, call_command
from twisted.web import http

from a2ui import serving


def app(scope, receive, send):  # never called: the server is built, not run
    raise AssertionError


def test_hard_cap_is_twice_the_payload_limit(settings):
    server = serving.build_server(app, ["tcp:port=0:interface=127.0.0.1"])
    assert server.websocket_max_message_size == server.websocket_max_frame_size == 2 * 1048576
    settings.A2UI = {**settings.A2UI, "MAX_PAYLOAD_SIZE": 4096}
    assert serving.websocket_hard_cap() == 8192


@pytest.mark.parametrize("cap", [1048576, 1000, 0])
def test_a_cap_that_hides_the_payload_error_is_refused(cap):
    with pytest.raises(ValueError, match="must exceed"):
        serving.build_server(app, ["tcp:port=0"], max_message_size=cap)
    with pytest.raises(CommandError, match="must exceed"):
        call_command("a2ui_serve", "-p", "0", "--websocket-max-message-size", str(cap))


def test_websocket_failures_close_cleanly():
    """failByDrop off: past the cap the peer gets a close frame (1009), not a dropped TCP."""
    server = serving.build_server(app, ["tcp:port=0"])

    class Factory:
        def setProtocolOptions(self, **options):
            self.options = options

    server.ws_factory = Factory()
    server.ready_callable()
    assert server.ws_factory.options == {"failByDrop": False}


def test_shutdown_survives_connections_without_an_application():
    """Daphne's kill_all_applications raised KeyError on a connection whose application was
    already reaped (or never started), logged a traceback and cancelled nothing else."""
    import asyncio

    server = serving.build_server(app, ["tcp:port=0"])
    loop = asyncio.new_event_loop()
    try:
        pending = loop.create_future()
        server.connections = {"idle keep-alive": {"connected": 0.0},
                              "socket": {"connected": 0.0, "application_instance": pending}}
        server.cancel_applications()
        assert pending.cancelled()
    finally:
        loop.close()


def test_a_socket_has_the_whole_shutdown_grace_to_answer_the_close():
    """autobahn drops a peer that does not answer a close within its own close handshake
    timeout (1 s); at shutdown each open socket gets ``SHUTDOWN_GRACE`` instead."""
    from daphne.ws_protocol import WebSocketProtocol

    server = serving.build_server(app, ["tcp:port=0"])
    sent = []

    class Socket(WebSocketProtocol):
        def __init__(self):
            self.state = self.STATE_OPEN
            self.closeHandshakeTimeout = 1

        def sendCloseFrame(self, code=None, reasonUtf8=None, isReply=False):
            sent.append((code, self.closeHandshakeTimeout))
            self.state = self.STATE_CLOSED  # answered at once: the wait ends

    server.connections = {Socket(): {"connected": 0.0}}
    done = server.close_websockets(grace=7.5)
    assert sent == [(1001, 7.5)]
    assert done.called


def test_jemalloc_is_preloaded_with_its_purging_thread(monkeypatch):
    from django.core.management.base import CommandError

    from a2ui.management.commands import a2ui_serve

    monkeypatch.setattr(a2ui_serve, "jemalloc_library", lambda: "libjemalloc.so.2")
    _, _, env = a2ui_serve.reexec_argv("jemalloc", {"LD_PRELOAD": "libother.so"})
    assert env["PYTHONMALLOC"] == "malloc"
    assert env["LD_PRELOAD"] == "libjemalloc.so.2 libother.so"
    assert env["MALLOC_CONF"] == a2ui_serve.JEMALLOC_CONF and "MALLOC_ARENA_MAX" not in env
    assert a2ui_serve.allocator_name(env) == "jemalloc"
    assert a2ui_serve.reexec_argv("jemalloc", {"MALLOC_CONF": "narenas:1"})[2][
        "MALLOC_CONF"] == "narenas:1"  # the operator's options are kept
    monkeypatch.setattr(a2ui_serve, "jemalloc_library", lambda: None)
    with pytest.raises(CommandError, match="libjemalloc2"):
        a2ui_serve.reexec_argv("jemalloc", {})


def test_bad_settings_stop_the_server_before_it_listens(settings):
    from django.core.management.base import SystemCheckError

    settings.A2UI = {**settings.A2UI, "MAX_PAYLOAD_SIZE": "big"}
    with pytest.raises(SystemCheckError, match="MAX_PAYLOAD_SIZE"):
        call_command("a2ui_serve", "-p", "0", skip_checks=False)


def test_the_command_line_runs_again_under_malloc_unless_told_otherwise(monkeypatch):
    from a2ui.management.commands.a2ui_serve import Command, reexec_argv

    monkeypatch.setattr("sys.orig_argv", ["python3", "-X", "utf8", "manage.py", "a2ui_serve",
                                          "-p", "9000"])
    executable, args, env = reexec_argv("malloc", {"PATH": "/bin"})
    assert args[1:] == ["-X", "utf8", "manage.py", "a2ui_serve", "-p", "9000"]
    assert env == {"PATH": "/bin", "PYTHONMALLOC": "malloc", "MALLOC_ARENA_MAX": "2"}
    # an arena count the operator chose is kept
    assert reexec_argv("malloc", {"MALLOC_ARENA_MAX": "8"})[2]["MALLOC_ARENA_MAX"] == "8"
    # already under an allocator the operator chose (or the one we set): go on here
    assert reexec_argv("malloc", {"PYTHONMALLOC": "malloc"}) is None
    assert reexec_argv("malloc", {"PYTHONMALLOC": "pymalloc_debug"}) is None
    # CPython's own allocator asked for, or a command line that does not parse
    assert reexec_argv("pymalloc", {}) is None
    assert reexec_argv(None, {}) is None
    # the command's own parser reads the option, abbreviations included
    command, line = Command(), ["manage.py", "a2ui_serve", "-p", "9000"]
    assert command.allocator_in(line) == "malloc"
    assert command.allocator_in([*line, "--allocator", "pymalloc"]) == "pymalloc"
    assert command.allocator_in([*line, "--allocator=pymalloc"]) == "pymalloc"
    assert command.allocator_in([*line, "--alloc", "pymalloc"]) == "pymalloc"
    assert command.allocator_in([*line, "--allocator", "jemalloc"]) == "jemalloc"
    assert command.allocator_in([*line, "--allocator", "tcmalloc"]) is None
    # where exec would start another process instead of replacing this one
    monkeypatch.setattr("os.name", "nt")
    assert reexec_argv("malloc", {}) is None


def test_a_bad_allocator_is_refused():
    with pytest.raises(CommandError, match="allocator"):
        call_command("a2ui_serve", "--allocator", "tcmalloc")


# The edge (a2ui.serving.Edge): deadlines on the HTTP channel and connection caps, on Twisted's
# in-memory transport and clock. tests/live/test_live_edge.py shows them on real sockets.

class _Answer(http.Request):
    """A request answered at once (or never, for a path starting /stream: an SSE stream)."""

    def process(self):
        if self.path.startswith(b"/stream"):
            return
        self.setHeader(b"content-length", b"2")
        self.write(b"ok")
        self.finish()


def _edge(**overrides):
    options = dict(header_timeout=10, body_timeout=30, keepalive_timeout=30, per_address=2,
                   max_connections=100, log_interval=60)
    return serving.Edge(**{**options, **overrides})


def _factory(edge):
    from twisted.internet import task

    server = serving.build_server(app, ["tcp:port=0"], edge=edge)
    server.connections = {}
    factory = serving.EdgeHTTPFactory(server)
    factory.reactor = clock = task.Clock()
    edge.clock = clock.seconds
    return factory, clock


def _connect(factory, host="192.0.2.1"):
    from twisted.internet.address import IPv4Address
    from twisted.internet.testing import StringTransport

    addr = IPv4Address("TCP", host, 40000)
    protocol = factory.buildProtocol(addr)
    transport = StringTransport(peerAddress=addr)
    protocol.makeConnection(transport)
    if isinstance(protocol, serving.EdgeProtocol):
        protocol.requestFactory = _Answer
    return protocol, transport


def _lose(protocol):
    from twisted.internet.error import ConnectionDone
    from twisted.python.failure import Failure

    protocol.connectionLost(Failure(ConnectionDone()))


def test_a_request_head_trickling_in_is_closed_at_its_deadline(caplog):
    """Slowloris: Twisted restarted its idle timer on every byte, so a header line every few
    seconds held the connection for ever; the head's deadline does not move."""
    factory, clock = _factory(_edge())
    protocol, transport = _connect(factory)
    transport.protocol = protocol
    protocol.dataReceived(b"GET / HTTP/1.1\r\n")
    for _ in range(9):
        clock.advance(1)
        protocol.dataReceived(b"X-Slow: 1\r\n")
    assert not transport.disconnecting
    clock.advance(1)
    assert transport.disconnecting and transport.value() == b""  # closed, nothing answered
    assert [r.getMessage() for r in caplog.records if r.name == "a2ui.edge"] == [
        "a2ui edge: closed a connection from 192.0.2.1: no complete request head within 10 s "
        "(EDGE_HEADER_TIMEOUT_SECONDS)"]


def test_a_connection_that_sends_nothing_is_closed_at_the_head_deadline():
    factory, clock = _factory(_edge())
    _protocol, transport = _connect(factory)
    clock.advance(9.9)
    assert not transport.disconnecting
    clock.advance(0.1)
    assert transport.disconnecting


def test_a_body_trickling_in_is_closed_at_its_deadline():
    factory, clock = _factory(_edge())
    protocol, transport = _connect(factory)
    protocol.dataReceived(b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n")
    for _ in range(29):
        clock.advance(1)
        protocol.dataReceived(b"a")
    assert not transport.disconnecting
    clock.advance(1)
    assert transport.disconnecting


def test_keep_alive_then_the_next_request_has_its_own_head_deadline():
    factory, clock = _factory(_edge())
    protocol, transport = _connect(factory)
    clock.advance(9)
    protocol.dataReceived(b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\nhi")
    assert transport.value().startswith(b"HTTP/1.1 200") and not transport.disconnecting
    clock.advance(20)  # idle: the keep-alive timeout (30 s) runs
    protocol.dataReceived(b"GET / HTTP/1.1\r\n")  # the next request's first byte: 10 s for it
    clock.advance(5)
    protocol.dataReceived(b"Host: x\r\n")
    clock.advance(4.9)
    assert not transport.disconnecting
    clock.advance(0.1)
    assert transport.disconnecting


def test_an_idle_keep_alive_connection_is_closed():
    factory, clock = _factory(_edge(keepalive_timeout=5))
    protocol, transport = _connect(factory)
    protocol.dataReceived(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
    assert transport.value().startswith(b"HTTP/1.1 200")
    clock.advance(4.9)
    assert not transport.disconnecting
    clock.advance(0.1)
    assert transport.disconnecting


def test_a_response_being_streamed_has_no_deadline():
    """An SSE stream (a request still being answered) is not cut by any of the timers."""
    factory, clock = _factory(_edge())
    protocol, transport = _connect(factory)
    protocol.dataReceived(b"GET /stream HTTP/1.1\r\nHost: x\r\n\r\n")
    clock.advance(3600)
    assert not transport.disconnecting


def test_connections_beyond_an_address_cap_are_refused_before_parsing(caplog):
    factory, _clock = _factory(_edge(per_address=2))
    first, _ = _connect(factory)
    _connect(factory)
    refused = []
    for _ in range(50):
        protocol, transport = _connect(factory)
        refused.append(not isinstance(protocol, serving.EdgeProtocol) and transport.disconnecting)
    assert refused == [True] * 50  # closed as soon as made, no HTTP channel
    other, other_transport = _connect(factory, "192.0.2.2")  # another address is served
    assert isinstance(other, serving.EdgeProtocol) and not other_transport.disconnecting
    _lose(first)
    again, _ = _connect(factory)  # a closed connection gives its place back
    assert isinstance(again, serving.EdgeProtocol)
    lines = [r.getMessage() for r in caplog.records if r.name == "a2ui.edge"]
    assert lines == ["a2ui edge: refused a connection from 192.0.2.1: it holds 2 connections, "
                     "the cap per address (EDGE_MAX_CONNECTIONS_PER_ADDRESS)"]  # not 50


def test_the_process_cap_refuses_every_address():
    factory, _clock = _factory(_edge(per_address=0, max_connections=3))
    held = [_connect(factory, f"192.0.2.{n}")[0] for n in range(3)]
    assert all(isinstance(p, serving.EdgeProtocol) for p in held)
    protocol, transport = _connect(factory, "192.0.2.50")
    assert not isinstance(protocol, serving.EdgeProtocol) and transport.disconnecting
    for protocol in held:
        _lose(protocol)
    assert factory.edge.limiter.total == 0


def test_loopback_is_a_trusted_proxy_by_default(settings):
    """A proxy on the same host connects from loopback: every client would share its cap."""
    factory, _clock = _factory(serving.Edge.from_settings(per_address=1))
    assert all(isinstance(_connect(factory, "127.0.0.1")[0], serving.EdgeProtocol)
               for _ in range(5))
    assert isinstance(_connect(factory, "127.0.0.2")[0], serving.EdgeProtocol)
    assert not isinstance(_connect(factory, "127.0.0.2")[0], serving.EdgeProtocol)
    settings.A2UI = {**settings.A2UI, "EDGE_TRUSTED_PROXIES": []}
    factory, _clock = _factory(serving.Edge.from_settings(per_address=1))
    assert isinstance(_connect(factory, "127.0.0.1")[0], serving.EdgeProtocol)
    assert not isinstance(_connect(factory, "127.0.0.1")[0], serving.EdgeProtocol)


def test_the_process_cap_stays_under_the_descriptor_limit(settings):
    edge = serving.Edge.from_settings(fd_limit=1024)
    assert edge.limiter.total_cap == (1024 - 102) // 2
    settings.A2UI = {**settings.A2UI, "EDGE_MAX_CONNECTIONS": 100}
    assert serving.Edge.from_settings(fd_limit=1024).limiter.total_cap == 100
    settings.A2UI = {**settings.A2UI, "EDGE_MAX_CONNECTIONS": 100000}
    assert serving.Edge.from_settings(fd_limit=1024).limiter.total_cap == 461


def test_a_websocket_gives_its_connection_place_back(monkeypatch):
    """After an upgrade the transport belongs to Daphne's WebSocket protocol; the place goes
    with the transport and is given back when that protocol's connection is lost."""
    factory, _clock = _factory(_edge(per_address=1))
    protocol, transport = _connect(factory)
    assert transport.a2ui_edge_slot is protocol.slot and protocol.slot.open
    from daphne.ws_protocol import WebSocketFactory, WebSocketProtocol

    # Daphne's onClose reads what its onConnect (the handshake, not sent here) set up
    monkeypatch.setattr(WebSocketProtocol, "onClose", lambda self, *args: None)
    ws_factory = WebSocketFactory(factory.server, server="daphne")
    ws_factory.protocol = serving.EdgeWebSocketProtocol  # as A2UIServer sets it
    ws = ws_factory.buildProtocol(transport.getPeer())
    transport.protocol = ws  # Daphne's upgrade: the transport changes hands
    ws.makeConnection(transport)
    assert protocol.slot.open
    _lose(ws)
    assert not protocol.slot.open and factory.edge.limiter.total == 0


@pytest.mark.parametrize("name, value", [
    ("EDGE_MAX_CONNECTIONS_PER_ADDRESS", -1), ("EDGE_MAX_CONNECTIONS_PER_ADDRESS", "256"),
    ("EDGE_MAX_CONNECTIONS", 0), ("EDGE_MAX_CONNECTIONS", True),
    ("EDGE_TRUSTED_PROXIES", "10.0.0.1"), ("EDGE_TRUSTED_PROXIES", ["nginx"]),
    ("EDGE_HEADER_TIMEOUT_SECONDS", 0),
])
def test_bad_edge_settings_are_refused(settings, name, value):
    from a2ui.checks import check_a2ui_settings

    settings.A2UI = {**settings.A2UI, name: value}
    assert [e.id for e in check_a2ui_settings(None)] in (["a2ui.E007"], ["a2ui.E002"])


@pytest.mark.parametrize("flag", ["--header-timeout", "--max-connections", "--keepalive-timeout"])
def test_bad_edge_flags_are_refused(flag):
    with pytest.raises(CommandError, match="positive"):
        call_command("a2ui_serve", "-p", "0", flag, "0")


def test_the_listening_sockets_get_a_backlog():
    """Twisted's backlog of 50 dropped other clients' SYNs under a connection flood (each
    connect waited a second for the retry); a2ui_serve asks for 1024."""
    from daphne.endpoints import build_endpoint_description_strings
    from twisted.internet import reactor
    from twisted.internet.endpoints import serverFromString

    from a2ui.management.commands.a2ui_serve import DEFAULT_BACKLOG, with_backlog

    built = build_endpoint_description_strings(host="::1", port=8000, unix_socket="/tmp/a.sock",
                                               file_descriptor=3)
    endpoints = with_backlog(built, DEFAULT_BACKLOG)
    assert endpoints == [r"tcp:port=8000:interface=\:\:1:backlog=1024",
                         "unix:/tmp/a.sock:backlog=1024", "fd:fileno=3"]
    assert serverFromString(reactor, endpoints[0])._backlog == 1024
    assert serverFromString(reactor, endpoints[1])._backlog == 1024
    with pytest.raises(CommandError, match="backlog"):
        call_command("a2ui_serve", "-p", "0", "--backlog", "0")


def test_autobahn_builds_no_debug_line_nobody_logs(monkeypatch):
    """Autobahn colours the arguments of a debug line for every chunk read and frame written
    (``click.style``, about 5.7 us a line) even when txaio drops the line; the built server
    stops that below txaio's debug level, and leaves it at that level."""
    from collections import deque

    import click
    import txaio
    from autobahn import util
    from autobahn.twisted import websocket as twisted_websocket
    from autobahn.twisted.websocket import WebSocketServerProtocol
    from autobahn.websocket import protocol as websocket_protocol
    from twisted.internet.testing import StringTransport

    for module in (websocket_protocol, twisted_websocket):
        monkeypatch.setattr(module, "hltype", util.hltype)
        monkeypatch.setattr(module, "hlval", util.hlval)
    with monkeypatch.context() as debug:
        debug.setattr(txaio, "get_global_log_level", lambda: "debug")
        assert serving.quiet_autobahn_debug_arguments() is False
    assert websocket_protocol.hltype is util.hltype  # a debug log gets its colours

    styled = []
    monkeypatch.setattr(click, "style", lambda text, **kw: styled.append(text) or text)
    protocol = WebSocketServerProtocol()
    protocol.transport, protocol.send_queue, protocol.data = StringTransport(), deque(), b""
    protocol.state, protocol.logOctets, protocol.peer = protocol.STATE_CLOSED, False, "tcp:x:1"
    protocol.sendData(b"frame")
    assert styled  # autobahn as it comes: the line's arguments are coloured

    styled.clear()
    serving.build_server(app, ["tcp:port=0"])
    assert websocket_protocol.hltype is websocket_protocol.hlval is serving._as_is
    assert twisted_websocket.hltype is twisted_websocket.hlval is serving._as_is
    protocol.sendData(b"frame")
    protocol.dataReceived(b"")
    assert protocol.transport.value() == b"frameframe"
    assert styled == []


@pytest.mark.parametrize("head", [
    b"GET / HTTP/1.1\r\nHost: x\r\nIdempotency-Key: " + b"k" * 100_000 + b"\r\n\r\n",  # one line
    b"GET / HTTP/1.1\r\nHost: x\r\n" + (b"X-Many: " + b"v" * 1000 + b"\r\n") * 20 + b"\r\n",
])
def test_a_head_too_large_is_answered_431_with_a_message(head):
    """Twisted closed a connection with a 100 KB header line without a word (and answered a
    bare 400 to many smaller ones)."""
    import json

    factory, clock = _factory(_edge())
    protocol, transport = _connect(factory)
    protocol.dataReceived(head)
    protocol.dataReceived(b"k" * 50_000 + b"\r\n\r\n")  # the rest of it: dropped
    answer = transport.value()
    assert answer.startswith(b"HTTP/1.1 431 Request Header Fields Too Large\r\n"), answer[:200]
    assert answer.count(b"HTTP/1.1") == 1
    body = json.loads(answer.split(b"\r\n\r\n", 1)[1])
    assert body["error"]["code"] == "headers_too_large" and "16384" in body["error"]["message"]
    clock.advance(1)
    assert transport.disconnecting
