"""How the app is served: Daphne with transport limits that leave the app's own limits reachable.

Daphne's WebSocket limits default to exactly 1 MiB, the default ``A2UI['MAX_PAYLOAD_SIZE']``: a
frame one byte over it was dropped by the transport (TCP reset, the client sees 1006) and the
app never got to answer ``-32002 Payload too large``. :func:`build_server` builds Daphne's
``Server`` with

* a WebSocket **hard cap** of :func:`websocket_hard_cap` (twice ``MAX_PAYLOAD_SIZE``) per message
  and per frame: frames up to the cap reach the consumers, which answer the protocol's payload
  error and keep the socket; beyond the cap the transport refuses to buffer more;
* a **clean close** past the cap: autobahn's ``failByDrop`` is turned off, so the peer gets a
  close frame (1009 message too big; 1002/1007 for protocol violations) instead of a dropped
  connection;
* a **clean shutdown**: on SIGTERM/SIGINT every open WebSocket gets a close frame (1001 going
  away) instead of a dropped connection (1006), and its consumer the disconnect that follows;
  after up to :data:`SHUTDOWN_GRACE` seconds the applications still running are cancelled, as
  Daphne does, and the process exits. While it does, readiness answers 503
  (:func:`a2ui.infra.health.start_draining`), so a load balancer's probe takes the process
  out of rotation.

and an **edge** (:class:`Edge`, the settings ``EDGE_*``; docs/operations.md, "The edge"):

* deadlines on Twisted's HTTP/1.1 channel (its own idle timer, :class:`EdgeChannel`): a
  request's head must be complete within ``EDGE_HEADER_TIMEOUT_SECONDS`` of the connection's
  opening or of the request's first byte, however slowly it trickles in; its body within
  ``EDGE_BODY_TIMEOUT_SECONDS`` of the head; an idle keep-alive connection is closed after
  ``EDGE_KEEPALIVE_TIMEOUT_SECONDS``;
* caps on the TCP connections a peer address and the process hold
  (:class:`a2ui.edge.ConnectionLimiter`), checked when Twisted accepts the connection, before
  a byte of it is parsed; a refused connection is closed at once;
* one WARNING line per address and ``EDGE_LOG_INTERVAL_SECONDS`` for those refusals and closes.

``manage.py a2ui_serve`` (the one way this project runs Daphne) calls it. Importing this module
installs Twisted's asyncio reactor (``daphne.server`` does so on import), as Daphne's CLI does.
"""

import asyncio
import logging
import time
from functools import partial

from daphne.server import Server
from daphne.ws_protocol import WebSocketProtocol
from twisted.internet import defer, reactor, task

from a2ui.conf import a2ui_settings
from a2ui.infra import health, memory
from a2ui.leanqueue import LeanQueue
from a2ui.serving.transport import (  # noqa: F401 (the edge, re-exported)
    Edge,
    EdgeChannel,
    EdgeHTTPFactory,
    EdgeProtocol,
    EdgeRequest,
    EdgeWebSocketProtocol,
    _answer_draining,
    _Draining,
    _Refused,
    descriptor_limit,
)

log = logging.getLogger("a2ui.serving")

#: The hard cap is this many times the payload limit.
HARD_CAP_FACTOR = 2
#: Close code and reason every open WebSocket gets when the server stops.
SHUTDOWN_CLOSE = (1001, "server shutting down")
#: Seconds the clients get to answer that close frame before the process exits anyway.
SHUTDOWN_GRACE = 2.0


def websocket_hard_cap(limit=None):
    """Largest WebSocket message (and frame) the transport buffers, in bytes."""
    limit = a2ui_settings.MAX_PAYLOAD_SIZE if limit is None else limit
    return HARD_CAP_FACTOR * limit


class A2UIServer(Server):
    """Daphne's ``Server`` whose WebSocket failures end with a close frame, never a drop, with
    the edge's deadlines and caps (:class:`Edge`)."""

    def __init__(self, *args, ready_callable=None, edge=None, **kwargs):
        self._user_ready = ready_callable
        self.edge = edge if edge is not None else Edge.from_settings()
        super().__init__(*args, ready_callable=self._ready, **kwargs)
        memory.register(self.registries)

    def registries(self):
        """Daphne's table of connections (made when it runs), which grows with the sockets
        (``memory.shrink``)."""
        connections = getattr(self, "connections", None)
        return [] if connections is None else [connections]

    @property
    def http_factory(self):
        return self.__dict__.get("_http_factory")

    @http_factory.setter
    def http_factory(self, factory):
        # Daphne's run() builds its HTTPFactory right before it listens with it: the edge's
        # factory (that class, plus the caps and deadlines) takes its place.
        if not isinstance(factory, EdgeHTTPFactory):
            factory = EdgeHTTPFactory(self)
        self.__dict__["_http_factory"] = factory

    def create_application(self, protocol, scope):
        """Daphne's, with a ``LeanQueue`` as the application's input queue (an idle socket
        holds it: ``a2ui.leanqueue``)."""
        assert "application_instance" not in self.connections[protocol]
        input_queue = LeanQueue()
        scope.setdefault("asgi", {"version": "3.0"})
        application_instance = self.application(
            scope=scope, receive=input_queue.get, send=partial(self.handle_reply, protocol))
        if protocol not in self.connections:
            return None
        self.connections[protocol]["application_instance"] = asyncio.ensure_future(
            application_instance, loop=asyncio.get_event_loop())
        return input_queue

    def _ready(self):
        # Daphne builds its factories inside run(), right before this hook; no connection has
        # been served yet (the reactor is not running).
        self.ws_factory.setProtocolOptions(failByDrop=False)
        self.ws_factory.protocol = EdgeWebSocketProtocol
        reactor.addSystemEventTrigger("before", "shutdown", self.close_websockets)
        reactor.addSystemEventTrigger("before", "shutdown", stop_adapters)
        if self._user_ready is not None:
            self._user_ready()

    def kill_all_applications(self):
        """Daphne's shutdown hook, made graceful: every open WebSocket gets a close frame (1001)
        and its application the ``websocket.disconnect`` that follows (consumers record the
        detached session, flush counters); once those are done, or after
        :data:`SHUTDOWN_GRACE` seconds, the applications still running are cancelled.
        From the start readiness answers 503 (``a2ui.infra.health.start_draining``)."""
        health.start_draining()
        waited = defer.maybeDeferred(self.close_websockets)
        waited.addBoth(lambda _: self.cancel_applications())
        return waited

    def cancel_applications(self):
        """Daphne's ``kill_all_applications`` minus its KeyError: a connection whose application
        is done (reaped by ``application_checker``) or never started has no
        ``application_instance``; Daphne's version raised there, logged a traceback and left
        the other applications running."""
        wait_for = []
        for details in list(self.connections.values()):
            instance = details.get("application_instance")
            if instance is not None and not instance.done():
                instance.cancel()
                wait_for.append(instance)
        logging.getLogger("daphne.server").info(
            "Killed %i pending application instances", len(wait_for))
        waited = defer.Deferred.fromFuture(asyncio.gather(*wait_for))
        waited.addErrback(lambda _failure: None)
        return waited

    def _finished(self, protocol):
        if protocol.state != protocol.STATE_CLOSED:
            return False
        instance = self.connections.get(protocol, {}).get("application_instance")
        return instance is None or instance.done()

    def close_websockets(self, grace=SHUTDOWN_GRACE):
        """Send every open WebSocket a 1001 close; fire once all are closed and their
        applications done, or when ``grace`` ends."""
        sockets = [p for p in list(getattr(self, "connections", {}))
                   if isinstance(p, WebSocketProtocol) and p.state == p.STATE_OPEN]
        for protocol in sockets:
            # The peer has the whole grace to answer (autobahn drops it after its own close
            # handshake timeout, 1 s, otherwise).
            protocol.closeHandshakeTimeout = grace
            # sendClose() only allows 1000 and 3000-4999 (the application's codes); 1001 is the
            # endpoint's own, sent by the protocol layer.
            protocol.sendCloseFrame(code=SHUTDOWN_CLOSE[0],
                                    reasonUtf8=SHUTDOWN_CLOSE[1].encode(), isReply=False)
        if not sockets:
            return None
        log.info("a2ui: closing %d WebSocket(s) for shutdown", len(sockets))
        done = defer.Deferred()
        deadline = time.monotonic() + grace

        def check():
            if time.monotonic() >= deadline or all(self._finished(p) for p in sockets):
                poll.stop()
                done.callback(None)

        poll = task.LoopingCall(check)
        poll.start(0.05)
        return done


def stop_adapters():
    """Run the ``on_stop`` hook of every registered adapter (``a2ui.core.adapters``) before the
    reactor stops: e.g. MCP's session manager, whose tasks would otherwise keep Daphne alive;
    then stop the process's background jobs (``a2ui.infra.jobs``: tasks cancelled, flushers'
    buffers written). Coroutine hooks are awaited (up to their own timeouts); a failing hook
    is logged."""
    import inspect

    from a2ui.core import adapters
    from a2ui.infra import jobs

    waits = [defer.Deferred.fromFuture(asyncio.ensure_future(jobs.stop()))]
    for adapter in adapters.registered():
        if adapter.on_stop is None:
            continue
        try:
            result = adapter.on_stop()
        except Exception:
            log.warning("a2ui: on_stop of %s failed", adapter.name, exc_info=True)
            continue
        if inspect.isawaitable(result):
            waited = defer.Deferred.fromFuture(asyncio.ensure_future(result))
            waited.addErrback(lambda failure, name=adapter.name: log.warning(
                "a2ui: on_stop of %s failed: %s", name, failure.getErrorMessage()))
            waits.append(waited)
    return defer.gatherResults(waits) if waits else None


def _as_is(value, *args, **kwargs):
    return value


def quiet_autobahn_debug_arguments():
    """Stop autobahn building the arguments of debug lines nobody logs.

    Autobahn's WebSocket protocol logs a debug line for every chunk it reads and every frame
    it writes, and builds the line's arguments first: ``hltype`` and ``hlval`` colour a
    method's qualified name and the peer with ``click.style``, about 5.7 us a line (three
    lines per agent push: the agent's frame read, its reply and the person's event written),
    while txaio drops the line unless its log level is ``debug`` or ``trace``. Below that
    level, the names in autobahn's two protocol modules are replaced by a function returning
    its argument: a debug line turned on later shows the plain values. Returns whether they
    were replaced (idempotent).
    """
    import txaio
    from autobahn.twisted import websocket as twisted_websocket  # selects txaio's Twisted
    from autobahn.websocket import protocol as websocket_protocol

    if txaio.get_global_log_level() in ("debug", "trace"):
        return False
    for module in (websocket_protocol, twisted_websocket):
        module.hltype = module.hlval = _as_is
    return True


def build_server(application, endpoints, *, max_message_size=None, edge=None, **options):
    """An :class:`A2UIServer` for ``endpoints`` (Daphne endpoint strings) with the A2UI limits
    and ``edge`` (default: :meth:`Edge.from_settings`).

    ``max_message_size`` defaults to :func:`websocket_hard_cap`; it must exceed
    ``MAX_PAYLOAD_SIZE``, or oversized frames never reach the app (ValueError). Other keyword
    arguments go to Daphne's ``Server`` unchanged.
    """
    limit = a2ui_settings.MAX_PAYLOAD_SIZE
    cap = websocket_hard_cap(limit) if max_message_size is None else max_message_size
    if cap <= limit:
        raise ValueError(
            f"the WebSocket message size cap ({cap} bytes) must exceed A2UI['MAX_PAYLOAD_SIZE'] "
            f"({limit} bytes): frames over the limit must reach the app to get -32002"
        )
    quiet_autobahn_debug_arguments()
    return A2UIServer(
        application=application,
        endpoints=endpoints,
        edge=edge,
        websocket_max_message_size=cap,
        websocket_max_frame_size=cap,
        **options,
    )
