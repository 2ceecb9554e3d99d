"""One pipelined Redis connection per event loop, for the few commands on the per-message path.

Why: redis-py's asyncio client spends about 150 us of CPU on a four-command pipeline (pool
checkout, retry and timeout wrappers, a parse per command) and 77 us on a single INCR; on the
push path that was half of the serving process's CPU (docs/performance.md). The path needs a
handful of commands with integer, string and nil replies. This sends each batch in one write on
one connection and parses the replies with hiredis, the C parser redis-py itself uses: about
45 us. Everything else (the cache, the channel layer, admin work) stays on redis-py.

Replies come back in the order the batches were written (Redis answers a connection in order),
so each batch is a ``(count, replies, future)`` entry in a FIFO. A batch is resolved only once
all its replies are read, so an error reply never puts the stream out of step. A connection
that stops answering for ``timeout`` seconds is aborted: its waiters fail and the next batch
connects again. A batch whose connection dies under it is sent once more on a new one. URLs: ``redis://`` and ``rediss://`` with optional user, password, database
(path or ``?db=``) and ``?ssl_cert_reqs=none|optional|required``, and ``redis+sentinel://``
(``a2ui.infra.redisurl``); anything else (``unix://``, other options) raises ValueError and
the caller uses redis-py, which understands them all.

Sentinel: each new connection first asks the sentinels, in turn, for the primary's address
(``SENTINEL GET-MASTER-ADDR-BY-NAME``; the one that answered is asked first next time) and
checks with ``ROLE`` that the server it reached is a primary. A connection that dies, or whose
server answers ``READONLY`` (a primary demoted under it), is dropped; its batch is sent once more
on a connection to the primary the sentinels name then. ``bench/bench_redisline.py`` measures
this client against redis-py with hiredis for the same commands.
"""

import asyncio
import collections
import ssl
from urllib.parse import parse_qs, unquote, urlsplit

import hiredis

from a2ui.infra import redisurl


class ReplyError(Exception):
    """Redis answered a command with an error."""


class Unanswered(ConnectionError):
    """Redis did not answer in time (not retried: the caller has waited long enough)."""


class NotPrimary(ConnectionError):
    """The server reached is not (or no longer) the primary: ask the sentinels again."""


def readonly(exc):
    return isinstance(exc, ReplyError) and str(exc).startswith("READONLY")


def pack(*commands):
    """RESP encoding of ``commands`` (tuples of str / bytes / int), one bytes object."""
    out = []
    for command in commands:
        out.append(b"*%d\r\n" % len(command))
        for arg in command:
            if isinstance(arg, str):
                arg = arg.encode()
            elif isinstance(arg, int):
                arg = b"%d" % arg
            out.append(b"$%d\r\n%s\r\n" % (len(arg), arg))
    return b"".join(out)


CERT_REQS = {"none": ssl.CERT_NONE, "optional": ssl.CERT_OPTIONAL, "required": ssl.CERT_REQUIRED}


def parse_url(url):
    """``(host, port, ssl_verify_mode or None, username, password, db)`` of a Redis URL."""
    if redisurl.is_sentinel(url):
        raise ValueError("a Sentinel URL has no single server: redisurl.parse_sentinel")
    parts = urlsplit(url)
    if parts.scheme not in ("redis", "rediss") or not parts.hostname:
        raise ValueError(f"unsupported Redis URL for the hot path: {parts.scheme}://")
    query = {k: v[-1] for k, v in parse_qs(parts.query).items()}
    unknown = set(query) - {"db", "ssl_cert_reqs"}
    if unknown or ("ssl_cert_reqs" in query and parts.scheme != "rediss"):
        raise ValueError(f"Redis URL options left to redis-py: {sorted(unknown) or 'ssl'}")
    verify = None
    if parts.scheme == "rediss":
        reqs = query.get("ssl_cert_reqs", "required").lower()
        if reqs not in CERT_REQS:
            raise ValueError(f"ssl_cert_reqs={reqs!r} left to redis-py")
        verify = CERT_REQS[reqs]
    db = parts.path.lstrip("/") or query.get("db", "0")
    return (
        parts.hostname,
        parts.port or 6379,
        verify,
        unquote(parts.username) if parts.username else None,
        unquote(parts.password) if parts.password else None,
        int(db or 0),
    )


def ssl_context(verify_mode):
    """The TLS context for ``rediss://`` (None for plain ``redis://``)."""
    if verify_mode is None:
        return None
    context = ssl.create_default_context()
    if verify_mode != ssl.CERT_REQUIRED:
        context.check_hostname = False
        context.verify_mode = verify_mode
    return context


class _Protocol(asyncio.Protocol):
    def __init__(self, loop, timeout):
        self.loop = loop
        self.timeout = timeout
        self.reader = hiredis.Reader(encoding="utf-8", replyError=ReplyError)
        self.waiting = collections.deque()  # [count, replies, future, sent_at]
        self.transport = None
        self.lost = None  # the exception that ended the connection
        self.watchdog = None
        self.outbox = None  # batches of this event-loop turn, written together by _flush

    def connection_made(self, transport):
        self.transport = transport

    def send(self, data, count):
        """Queue one batch; the batches of one event-loop turn go out in one write.

        Under load many consumers send in the same turn, and a write is a system call each:
        corked, a turn's commands cost one (the replies' order is the waiting order either way).
        """
        if self.lost is not None:
            raise ConnectionError("Redis connection lost") from self.lost
        future = self.loop.create_future()
        self.waiting.append([count, [], future, self.loop.time()])
        if self.outbox is None:
            self.outbox = [data]
            self.loop.call_soon(self._flush)
        else:
            self.outbox.append(data)
        if self.watchdog is None:
            self.watchdog = self.loop.call_later(self.timeout, self._check)
        return future

    def _flush(self):
        outbox, self.outbox = self.outbox, None
        if self.lost is None and outbox:
            self.transport.write(outbox[0] if len(outbox) == 1 else b"".join(outbox))

    def data_received(self, data):
        self.reader.feed(data)
        while self.waiting:
            reply = self.reader.gets()
            if reply is False:
                return
            self.answered(reply)

    def answered(self, reply):
        """``reply`` is the next one the oldest waiting batch is owed."""
        waiting = self.waiting
        entry = waiting[0]
        entry[1].append(reply)
        if len(entry[1]) == entry[0]:
            waiting.popleft()
            if not entry[2].done():
                errors = [r for r in entry[1] if isinstance(r, ReplyError)]
                if errors:
                    entry[2].set_exception(errors[0])
                    if any(readonly(e) for e in errors):  # a demoted primary: drop it
                        self.lost = NotPrimary("the server answered READONLY")
                        self.transport.close()
                else:
                    entry[2].set_result(entry[1])

    def _check(self):
        self.watchdog = None
        if not self.waiting or self.lost is not None:
            return
        age = self.loop.time() - self.waiting[0][3]
        if age >= self.timeout:
            self.transport.abort()
            self._fail(Unanswered(f"Redis did not answer in {self.timeout} s"))
        else:
            self.watchdog = self.loop.call_later(self.timeout - age, self._check)

    def connection_lost(self, exc):
        self._fail(exc or ConnectionError("Redis closed the connection"))

    def _fail(self, exc):
        if self.lost is None:
            self.lost = exc
        kind = Unanswered if isinstance(exc, Unanswered) else ConnectionError
        while self.waiting:
            future = self.waiting.popleft()[2]
            if not future.done():
                future.set_exception(kind(f"Redis connection lost: {exc}"))
        if self.watchdog is not None:
            self.watchdog.cancel()
            self.watchdog = None


class Line:
    """A lazily (re)connected pipelined connection bound to the running event loop."""

    protocol = _Protocol  # what each connection speaks: ``protocol(loop, timeout)``

    def __init__(self, url, timeout=15.0, on_connect=None):
        #: ``await on_connect(send)`` on each new connection before any batch goes out on it;
        #: ``await send(*commands)`` runs commands on it (``redisstate``: the history check).
        self.on_connect = on_connect
        self.sentinel = None
        if redisurl.is_sentinel(url):
            target = self.sentinel = redisurl.parse_sentinel(url)
            self.sentinels = list(target.sentinels)
            self.host = self.port = None
            self.verify_mode = redisurl.CERT_REQS[target.ssl_cert_reqs] if target.tls else None
            self.username, self.password, self.db = target.username, target.password, target.db
        else:
            (self.host, self.port, self.verify_mode, self.username, self.password,
             self.db) = parse_url(url)
        self.timeout = timeout
        self._protocol = None
        self._connecting = None

    async def execute(self, *commands):
        """Send ``commands`` in one write; return their replies as a list.

        When the connection they were written to turns out dead (Redis restarted, failed over,
        or dropped it), they are sent once more on a new connection before the caller sees an
        error. (A command that did run before the connection died then runs twice: an INCR of a
        sequence number skips one, which the consumers' gap detection absorbs.)
        """
        data = pack(*commands)
        protocol = self._protocol
        if protocol is None or protocol.lost is not None:
            protocol = await self._connect()
            return await protocol.send(data, len(commands))
        try:
            return await protocol.send(data, len(commands))
        except Unanswered:
            raise
        except ConnectionError:
            protocol = await self._connect()
            return await protocol.send(data, len(commands))
        except ReplyError as exc:
            if not readonly(exc):
                raise
            # Not run (a replica refuses writes): send once more to the primary named now.
            protocol = await self._connect()
            return await protocol.send(data, len(commands))

    def send_soon(self, *commands):
        """Queue ``commands`` on the open connection without waiting: the future of their
        replies, or None when no connection is open (then :meth:`execute` connects). Not sent
        again on a new connection: a caller that needs that awaits :meth:`execute`."""
        protocol = self._protocol
        if protocol is None or protocol.lost is not None:
            return None
        return protocol.send(pack(*commands), len(commands))

    async def _connect(self):
        if self._connecting is None:
            self._connecting = asyncio.ensure_future(self._open())
        connecting = self._connecting
        try:
            return await asyncio.shield(connecting)
        finally:
            if self._connecting is connecting and connecting.done():
                self._connecting = None

    async def _discover(self):
        """The primary's ``(host, port)`` as the first sentinel that knows it says."""
        target = self.sentinel
        setup = []
        if target.sentinel_password is not None:
            setup.append(("AUTH", target.sentinel_username, target.sentinel_password)
                         if target.sentinel_username else ("AUTH", target.sentinel_password))
        query = pack(*setup, ("SENTINEL", "GET-MASTER-ADDR-BY-NAME", target.service))
        errors = []
        for index, (host, port) in enumerate(list(self.sentinels)):
            try:
                reader, writer = await asyncio.wait_for(
                    asyncio.open_connection(host, port), min(self.timeout, 2.0))
                try:
                    writer.write(query)
                    parser = hiredis.Reader(encoding="utf-8", replyError=ReplyError)
                    replies = []
                    while len(replies) < len(setup) + 1:
                        chunk = await asyncio.wait_for(reader.read(4096), min(self.timeout, 2.0))
                        if not chunk:
                            raise ConnectionError("the sentinel closed the connection")
                        parser.feed(chunk)
                        while (reply := parser.gets()) is not False:
                            replies.append(reply)
                finally:
                    writer.close()
                address = replies[-1]
                if isinstance(address, ReplyError) or not address:
                    errors.append(f"{host}:{port}: {address or 'no primary named'}")
                    continue
                if index:  # ask the one that answered first next time
                    self.sentinels.insert(0, self.sentinels.pop(index))
                return address[0], int(address[1])
            except (TimeoutError, OSError, ReplyError) as exc:
                errors.append(f"{host}:{port}: {type(exc).__name__} {exc}")
        raise ConnectionError(f"no sentinel named the primary {target.service!r}: "
                              + "; ".join(errors))

    async def _open(self):
        loop = asyncio.get_running_loop()
        context = ssl_context(self.verify_mode)
        host, port = (await self._discover()) if self.sentinel else (self.host, self.port)
        _, protocol = await asyncio.wait_for(
            loop.create_connection(lambda: self.protocol(loop, self.timeout), host, port,
                                   ssl=context),
            self.timeout,
        )
        setup = []
        if self.password is not None:
            setup.append(("AUTH", self.username, self.password) if self.username
                         else ("AUTH", self.password))
        if self.db:
            setup.append(("SELECT", self.db))
        if self.sentinel:  # the sentinels may still name a primary that was demoted
            setup.append(("ROLE",))
        try:
            if setup:
                replies = await protocol.send(pack(*setup), len(setup))
                if self.sentinel and replies[-1][0] not in ("master", b"master"):
                    raise NotPrimary(f"{host}:{port} is a {replies[-1][0]}, not the primary")
            if self.on_connect is not None:
                await self.on_connect(lambda *commands: protocol.send(pack(*commands),
                                                                      len(commands)))
        except BaseException:
            protocol.transport.close()
            raise
        self._protocol = protocol
        return protocol

    def close(self):
        if self._protocol is not None and self._protocol.transport is not None:
            self._protocol.transport.close()
        self._protocol = None
