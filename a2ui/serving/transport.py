"""The edge in Twisted's terms (``a2ui.serving``'s docstring: deadlines on the HTTP/1.1
channel, connection caps checked at accept, the client address believed past the trusted
proxies, 503 ``draining`` during the shutdown grace): Daphne's factory, channel, protocols and
request, subclassed. The rules themselves are sans-I/O, in ``a2ui.edge``."""

import logging
import time

from daphne.http_protocol import HTTPFactory, WebRequest
from daphne.ws_protocol import WebSocketProtocol
from twisted.internet.protocol import Protocol
from twisted.protocols import basic
from twisted.web import http

from a2ui import edge as edgecaps
from a2ui.conf import a2ui_settings
from a2ui.infra import health, prom

log = logging.getLogger("a2ui.serving")

#: Seconds a connection answered 431 (head too large) is read and dropped before it closes.
LINGER_SECONDS = 1


def descriptor_limit():
    """The process's soft RLIMIT_NOFILE, or None where there is none to read."""
    try:
        import resource
    except ImportError:  # not POSIX
        return None
    soft, _hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    return None if soft == resource.RLIM_INFINITY else soft


class Edge:
    """The server's edge: the deadlines its HTTP channels use, the connection caps, and the
    throttled WARNING lines for what it refuses or closes (logger ``a2ui.edge``)."""

    log = logging.getLogger("a2ui.edge")

    def __init__(self, *, header_timeout, body_timeout, keepalive_timeout, per_address,
                 max_connections, trusted_proxies=(), log_interval=60, clock=time.monotonic):
        self.header_timeout = header_timeout
        self.body_timeout = body_timeout
        self.keepalive_timeout = keepalive_timeout
        self.exempt = edgecaps.parse_networks(list(trusted_proxies))
        self.limiter = edgecaps.ConnectionLimiter(per_address, max_connections)
        self.throttle = edgecaps.LogThrottle(log_interval)
        self.clock = clock

    @classmethod
    def from_settings(cls, *, header_timeout=None, body_timeout=None, keepalive_timeout=None,
                      per_address=None, max_connections=None, fd_limit=None):
        """The edge the ``EDGE_*`` settings describe; a keyword given (not None) wins over its
        setting. The process cap is never above what the descriptor limit allows
        (:func:`a2ui.edge.connection_budget` of RLIMIT_NOFILE)."""
        s = a2ui_settings

        def pick(given, setting):
            return given if given is not None else getattr(s, setting)

        budget = fd_limit if fd_limit is not None else descriptor_limit()
        cap = pick(max_connections, "EDGE_MAX_CONNECTIONS")
        if budget is not None:
            budget = edgecaps.connection_budget(budget)
            cap = budget if cap is None else min(cap, budget)
        return cls(
            header_timeout=pick(header_timeout, "EDGE_HEADER_TIMEOUT_SECONDS"),
            body_timeout=pick(body_timeout, "EDGE_BODY_TIMEOUT_SECONDS"),
            keepalive_timeout=pick(keepalive_timeout, "EDGE_KEEPALIVE_TIMEOUT_SECONDS"),
            per_address=pick(per_address, "EDGE_MAX_CONNECTIONS_PER_ADDRESS"),
            max_connections=cap if cap is not None else float("inf"),
            trusted_proxies=s.EDGE_TRUSTED_PROXIES,
            log_interval=s.EDGE_LOG_INTERVAL_SECONDS,
        )

    def describe(self):
        per = self.limiter.per_address or "no cap"
        trusted = f" (not for {len(self.exempt)} trusted network(s))" if self.exempt else ""
        return (f"request head within {self.header_timeout} s, body within "
                f"{self.body_timeout} s, keep-alive {self.keepalive_timeout} s; connections "
                f"per address {per}{trusted}, per process {self.limiter.total_cap}")

    def admit(self, addr):
        """A :class:`a2ui.edge.Slot` for a connection from ``addr`` (Twisted's address), or
        None when it is refused (logged, throttled)."""
        host = getattr(addr, "host", None)
        key = edgecaps.address_key(host, self.exempt)
        slot = self.limiter.slot(key)
        if isinstance(slot, str):
            if prom.ON:
                prom.refused("tcp", "process_cap" if slot == self.limiter.TOTAL
                             else "address_cap")
            if slot == self.limiter.TOTAL:
                self.warn("total", "refused a connection from %s: the process holds %d "
                          "connections, its cap (EDGE_MAX_CONNECTIONS, under the descriptor "
                          "limit)", host, self.limiter.total)
            else:
                self.warn(key, "refused a connection from %s: it holds %d connections, the "
                          "cap per address (EDGE_MAX_CONNECTIONS_PER_ADDRESS)", host,
                          self.limiter.count(key))
            return None
        return slot

    def timed_out(self, addr, phase):
        host = getattr(addr, "host", None)
        key = edgecaps.address_key(host) or str(host)
        if phase == "head":
            self.warn(key, "closed a connection from %s: no complete request head within %s s "
                      "(EDGE_HEADER_TIMEOUT_SECONDS)", host, self.header_timeout)
        else:
            self.warn(key, "closed a connection from %s: the request body did not arrive "
                      "within %s s (EDGE_BODY_TIMEOUT_SECONDS)", host, self.body_timeout)

    def warn(self, key, message, *args):
        allowed, held = self.throttle.allow(key, self.clock())
        if allowed:
            if held:
                message += "; %d more refusals or closes since the last line"
                args = (*args, held)
            self.log.warning("a2ui edge: " + message, *args)


class EdgeChannel(http.HTTPChannel):
    """Twisted's HTTP/1.1 channel with deadlines, on its own idle timer (``TimeoutMixin``).

    Twisted restarts that timer on every byte, so a client trickling a byte every few seconds
    (slowloris) kept its connection for ever. Here the timer runs as a deadline while a
    request arrives: from the connection's opening (or the request's first byte) until its
    head is complete (``header_timeout``), then until its body is (``body_timeout``). Between
    requests it is Twisted's idle timer (``timeOut``, the keep-alive timeout); while a request
    is handled (a response, an SSE stream, a WebSocket) it is off, as in Twisted.
    """

    _phase = None  # "head", "body", or None (between requests, or handling one)
    _draining = b""  # a request's head so far, on a kept-alive connection while draining

    def connectionMade(self):
        self.edge = self.factory.edge
        super().connectionMade()
        self._expect("head", self.edge.header_timeout)

    def _expect(self, phase, seconds):
        self._phase = phase
        self.setTimeout(seconds)

    def dataReceived(self, data):
        # HTTPChannel.dataReceived minus its resetTimeout(): the first byte of a request
        # starts its deadline; later bytes do not move it.
        if self._phase is None and not self._handlingRequest:
            if health.draining():  # a new request on a kept-alive connection: as _Draining
                self._draining = self._draining + data
                if not edgecaps.head_complete(self._draining):
                    return None
                data, self._draining = self._draining, b""
                if edgecaps.request_path(data) not in self.factory.liveness_paths():
                    self.setTimeout(None)
                    return _answer_draining(self.transport)
            self._expect("head", self.edge.header_timeout)
        basic.LineReceiver.dataReceived(self, data)

    _refused = False

    def lineReceived(self, line):
        if self._refused:
            return None
        if self._receivedHeaderSize + len(line) > self.totalHeadersSize:
            return self.lineLengthExceeded(line)
        return super().lineReceived(line)

    def lineLengthExceeded(self, line):
        # Twisted closed without a word (a 100 KB header line) or a bare 400: 431, then the
        # rest of the head is dropped for a second before the close (edgecaps.too_large_head).
        self.transport.write(edgecaps.too_large_head(self.totalHeadersSize))
        self._refused, self._phase = True, None
        self.dataReceived = lambda data: None
        self.setTimeout(LINGER_SECONDS)

    def allHeadersReceived(self):
        super().allHeadersReceived()
        self._expect("body", self.edge.body_timeout)

    def allContentReceived(self):
        # Twisted saves the timer's period here and restores it once the response is done:
        # the keep-alive timeout, not the body's deadline.
        self._phase = None
        self.setTimeout(self.edge.keepalive_timeout)
        super().allContentReceived()

    def timeoutConnection(self):
        if self._phase is not None:
            self.edge.timed_out(self.transport.getPeer(), self._phase)
        super().timeoutConnection()


class EdgeProtocol(http._GenericHTTPChannelProtocol):
    """What Twisted's ``HTTPFactory`` builds (an HTTP/1.1 or HTTP/2 channel behind one proxy
    object), holding the connection's place (``slot``) until the connection is lost. A
    WebSocket upgrade hands the transport to Daphne's protocol: the slot goes with the
    transport (:class:`EdgeWebSocketProtocol` releases it)."""

    slot = None

    def makeConnection(self, transport):
        transport.a2ui_edge_slot = self.slot
        self._channel.makeConnection(transport)

    def connectionLost(self, reason):
        if self.slot is not None:
            self.slot.release()
        self._channel.connectionLost(reason)


class EdgeWebSocketProtocol(WebSocketProtocol):
    """Daphne's WebSocket protocol, giving its connection's place back when it is lost."""

    def connectionLost(self, reason):
        slot = getattr(self.transport, "a2ui_edge_slot", None)
        if slot is not None:
            slot.release()
        super().connectionLost(reason)


class _Refused(Protocol):
    """A refused connection: closed as soon as it is made (under a TLS wrapper too, where
    returning no protocol would fail)."""

    def connectionMade(self):
        self.transport.abortConnection()


class EdgeRequest(WebRequest):
    """Daphne's request, the client's address believed only past the trusted proxies
    (:func:`a2ui.edge.believe_forwarded`): scope, caps, metrics and access log see one."""

    def process(self):
        edgecaps.believe_forwarded(self.requestHeaders, getattr(self.client, "host", None),
                                   self.server.edge.exempt, self.server)
        return super().process()


class _Draining(Protocol):
    """A connection made while the process shuts down (SIGTERM): once its request's head is
    in, a liveness probe goes on to the application (a draining process is alive); any other
    request, WebSocket handshakes included, is answered 503 ``draining``
    (:data:`a2ui.edge.DRAINING_RESPONSE`) and the connection closed."""

    head = b""

    def __init__(self, factory, addr):
        self.factory, self.addr = factory, addr

    def dataReceived(self, data):
        if self.head is None:
            return
        self.head += data
        if not edgecaps.head_complete(self.head):
            return
        head, self.head = self.head, None
        if edgecaps.request_path(head) not in self.factory.liveness_paths():
            return _answer_draining(self.transport)
        protocol = self.factory.build(self.addr)  # the request as any other
        if hasattr(self.transport, "wrappedProtocol"):  # under TLS: the wrapper feeds it
            self.transport.wrappedProtocol = protocol
        else:
            self.transport.protocol = protocol
        protocol.makeConnection(self.transport)
        protocol.dataReceived(head)


def _answer_draining(transport):
    transport.write(edgecaps.DRAINING_RESPONSE)
    transport.loseConnection()


class EdgeHTTPFactory(HTTPFactory):
    """Daphne's ``HTTPFactory`` with the edge: caps checked in ``buildProtocol`` (when the
    connection is accepted, before any parsing), :class:`EdgeChannel` for HTTP/1.1, and the
    keep-alive timeout as Twisted's idle ``timeOut``."""

    def __init__(self, server):
        super().__init__(server)
        self.edge = server.edge
        self.timeOut = self.edge.keepalive_timeout
        self._liveness = None  # the liveness probe's paths, answered while draining too

    def protocol(self):
        return EdgeProtocol(EdgeChannel())

    def buildProtocol(self, addr):
        return _Draining(self, addr) if health.draining() else self.build(addr)

    def liveness_paths(self):
        if self._liveness is None:
            from a2ui import probes

            self._liveness = {path for path, name in probes.probe_paths().items()
                              if name == probes.LIVENESS}
        return self._liveness

    def build(self, addr):
        slot = self.edge.admit(addr)
        if slot is None:
            return _Refused()
        try:
            protocol = super().buildProtocol(addr)
        except BaseException:
            slot.release()
            raise
        protocol.slot = slot
        protocol.requestFactory = EdgeRequest
        return protocol
