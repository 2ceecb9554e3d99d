"""Slow clients on real sockets, for tier 2 and the fuzz tier: connections that send a request a
little at a time (or not at all) from a loopback address, and note when the server closes them.

Bounded: a few dozen connections, driven by one thread with ``select`` for a few seconds; they
only ever connect to 127.0.0.1.
"""

import select
import socket
import time

HEAD = b"GET /a2ui/ HTTP/1.1\r\nHost: 127.0.0.1\r\n"
WEBSOCKET = (b"GET /ws/v4/a2ui?token=x HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\n"
             b"Connection: Upgrade\r\nSec-WebSocket-Version: 13\r\n")

#: What each kind of slow client sends: ``(first, trickle)``: ``first`` at once, then ``trickle``
#: over and over, one piece per interval; and which deadline closes it.
KINDS = {
    "silent": (b"", b"", "head"),  # connects and says nothing
    "request-line": (b"", b"G", "head"),  # the request line, a byte at a time
    "headers": (HEAD, b"X-Slow: 1\r\n", "head"),  # a header line at a time
    "websocket": (WEBSOCKET, b"X-Slow: 1\r\n", "head"),  # a WebSocket handshake, ditto
    "body": (b"POST /api/v4/sessions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100000\r\n"
             b"Content-Type: application/json\r\n\r\n", b"[", "body"),  # a body, a byte at a time
    "chunked": (b"POST /api/v4/sessions HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                b"Transfer-Encoding: chunked\r\n\r\n", b"1\r\n[\r\n", "body"),
    "keepalive": (HEAD + b"\r\n", b"", "keepalive"),  # one request, then idle
}


class SlowClient:
    """One connection from ``source``: a ``kind`` of :data:`KINDS`, or ``pieces`` (the first
    sent at once, the others one per ``interval``, then nothing more)."""

    def __init__(self, port, kind=None, source="127.0.0.1", interval=0.5, pieces=None):
        self.kind, self.source, self.interval = kind, source, interval
        if kind is not None:
            first, self.trickle, self.deadline = KINDS[kind]
            self.pieces = [first]
        else:
            self.pieces, self.trickle, self.deadline = list(pieces), b"", None
        self.sent = b""
        self.head_done = None  # seconds from connecting to sending the head's last byte
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.bind((source, 0))
        self.sock.settimeout(10)
        self.sock.connect(("127.0.0.1", port))
        self.sock.setblocking(False)
        self.opened = time.monotonic()
        self.closed_after = None  # seconds from connecting to the server's close
        self.received = b""
        self._next = self.opened
        self.tick(self.opened)

    def fileno(self):
        return self.sock.fileno()

    def tick(self, now):
        if self.closed_after is not None or now < self._next:
            return
        piece = self.pieces.pop(0) if self.pieces else self.trickle
        if not piece:
            return
        self._next = now + self.interval
        try:
            self.sock.sendall(piece)
        except OSError:
            self._closed(now)
            return
        self.sent += piece
        if self.head_done is None and b"\r\n\r\n" in self.sent:
            self.head_done = now - self.opened

    def readable(self, now):
        try:
            data = self.sock.recv(65536)
        except BlockingIOError:
            return
        except OSError:  # reset: closed
            data = b""
        if data:
            self.received += data
        else:
            self._closed(now)

    def _closed(self, now):
        if self.closed_after is None:
            self.closed_after = now - self.opened
            self.sock.close()

    def close(self):
        self.sock.close()


def drive(clients, until):
    """Send and read for every client until all are closed or ``until`` seconds have passed."""
    end = time.monotonic() + until
    while True:
        now = time.monotonic()
        open_ = [c for c in clients if c.closed_after is None]
        if not open_ or now >= end:
            break
        for client in open_:
            client.tick(now)
        ready, _, _ = select.select(open_, [], [], 0.05)
        now = time.monotonic()
        for client in ready:
            client.readable(now)
    for client in clients:
        if client.closed_after is None:
            client.close()
    return clients


def hold(port, count, kind="silent", source="127.0.0.1", settle=0.3, tries=5):
    """``count`` connections the server kept: a connection closed within ``settle`` seconds of
    opening (refused because one the server had not yet seen closed, such as a readiness probe's,
    still counted) is replaced, up to ``tries`` rounds."""
    held = []
    for _ in range(tries):
        fresh = [SlowClient(port, kind, source) for _ in range(count - len(held))]
        _settle(fresh, settle)
        held += [c for c in fresh if c.closed_after is None]
        if len(held) == count:
            return held
        time.sleep(settle)
    raise AssertionError(f"the server kept {len(held)} of {count} connections")


def _settle(clients, seconds):
    """Drive ``clients`` for ``seconds`` without closing the ones still open."""
    end = time.monotonic() + seconds
    while (now := time.monotonic()) < end:
        open_ = [c for c in clients if c.closed_after is None]
        if not open_:
            return
        for client in open_:
            client.tick(now)
        ready, _, _ = select.select(open_, [], [], 0.05)
        for client in ready:
            client.readable(time.monotonic())


def refused(port, source="127.0.0.1", wait=5.0):
    """True when the server closes a new connection from ``source`` without a byte of answer,
    though it sent a whole request."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((source, 0))
        sock.settimeout(wait)
        try:
            sock.connect(("127.0.0.1", port))
            sock.sendall(HEAD + b"\r\n")
            return sock.recv(100) == b""
        except ConnectionRefusedError:  # nothing listens: the server is gone, not refusing
            raise
        except ConnectionError:  # reset (also while connecting), or the pipe already broken
            return True
        except TimeoutError:
            return False


def answered(port, source="127.0.0.1", path="/a2ui/", wait=10.0):
    """The status line the server answers a whole GET from ``source`` with (b"" if none)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((source, 0))
        sock.settimeout(wait)
        sock.connect(("127.0.0.1", port))
        try:
            sock.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
                         .encode())
            return sock.recv(200).split(b"\r\n")[0]
        except OSError:
            return b""
