"""a2ui.infra.redisline: RESP packing, URLs, and the connection against a scripted server.

The scripted server is a plain asyncio server on 127.0.0.1 that answers what each test tells it
to; a real Redis is exercised by tests/live/test_live_direct.py and every live test.
"""

import asyncio
import ssl

import hiredis
import pytest

from a2ui.infra import redisline


def test_pack_encodes_commands_as_resp_arrays():
    assert redisline.pack(("GET", "k")) == b"*2\r\n$3\r\nGET\r\n$1\r\nk\r\n"
    assert redisline.pack(("EXPIRE", "k", 60), ("INCR", b"\xff")) == (
        b"*3\r\n$6\r\nEXPIRE\r\n$1\r\nk\r\n$2\r\n60\r\n*2\r\n$4\r\nINCR\r\n$1\r\n\xff\r\n"
    )
    # Non-ASCII text is counted in bytes, not characters.
    assert redisline.pack(("SET", "é", "ü")) == b"*3\r\n$3\r\nSET\r\n$2\r\n\xc3\xa9\r\n$2\r\n\xc3\xbc\r\n"


@pytest.mark.parametrize("url, parsed", [
    ("redis://127.0.0.1:6379/0", ("127.0.0.1", 6379, None, None, None, 0)),
    ("redis://localhost", ("localhost", 6379, None, None, None, 0)),
    ("redis://:s%40cret@h:7000/3", ("h", 7000, None, None, "s@cret", 3)),
    ("rediss://user:pw@h/2", ("h", 6379, ssl.CERT_REQUIRED, "user", "pw", 2)),
    ("rediss://h?ssl_cert_reqs=none", ("h", 6379, ssl.CERT_NONE, None, None, 0)),
    ("redis://h:6380?db=5", ("h", 6380, None, None, None, 5)),
])
def test_parse_url(url, parsed):
    assert redisline.parse_url(url) == parsed


@pytest.mark.parametrize("url", [
    "unix:///tmp/redis.sock", "http://h", "redis://",
    "redis://h?socket_timeout=5",  # options only redis-py knows
    "redis://h?ssl_cert_reqs=none",  # TLS options on a plain URL
    "rediss://h?ssl_cert_reqs=maybe",
])
def test_urls_left_to_redis_py_raise_value_error(url):
    with pytest.raises(ValueError):
        redisline.parse_url(url)


def test_tls_contexts():
    assert redisline.ssl_context(None) is None
    strict = redisline.ssl_context(ssl.CERT_REQUIRED)
    assert strict.verify_mode == ssl.CERT_REQUIRED and strict.check_hostname
    lax = redisline.ssl_context(ssl.CERT_NONE)
    assert lax.verify_mode == ssl.CERT_NONE and not lax.check_hostname


class ScriptedRedis:
    """Reads RESP commands; ``answer(command)`` returns the raw reply bytes, or None for silence."""

    def __init__(self, answer):
        self.answer = answer
        self.commands = []
        self.connections = 0
        self.closed = 0  # connections the client closed
        self.writers = []

    async def start(self):
        self.server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.port = self.server.sockets[0].getsockname()[1]
        return self

    async def _serve(self, reader, writer):
        self.connections += 1
        self.writers.append(writer)
        parser = hiredis.Reader()
        while data := await reader.read(65536):
            parser.feed(data)
            while (command := parser.gets()) is not False:
                command = [part.decode() for part in command]
                self.commands.append(command)
                reply = self.answer(command)
                if reply is not None:
                    writer.write(reply)
        self.closed += 1
        writer.close()

    def drop_connections(self):
        for writer in self.writers:
            writer.transport.abort()
        self.writers = []

    async def stop(self):
        self.drop_connections()
        self.server.close()
        await self.server.wait_closed()


def counter():
    values = {}

    def answer(command):
        name, *args = command
        if name == "INCR":
            values[args[0]] = values.get(args[0], 0) + 1
            return b":%d\r\n" % values[args[0]]
        if name == "GET":
            return b"$-1\r\n" if args[0] not in values else b"$%d\r\n%d\r\n" % (
                len(str(values[args[0]])), values[args[0]])
        if name == "HINCRBY":
            field = (args[0], args[1])
            values[field] = int(values.get(field, 0)) + int(args[2])
            return b":%d\r\n" % values[field]
        if name == "HSETNX":
            if (args[0], args[1]) in values:
                return b":0\r\n"
            values[(args[0], args[1])] = args[2]
            return b":1\r\n"
        if name == "HMGET":
            out = [b"*%d\r\n" % len(args[1:])]
            for field in args[1:]:
                value = values.get((args[0], field))
                out.append(b"$-1\r\n" if value is None else b"$%d\r\n%s\r\n" % (
                    len(str(value)), str(value).encode()))
            return b"".join(out)
        if name in ("SELECT", "AUTH"):
            return b"+OK\r\n"
        if name == "BOOM":
            return b"-ERR boom\r\n"
        if name == "HANG":
            return None
        return b":1\r\n"

    return answer


async def test_batches_are_answered_in_order_on_one_connection():
    server = await ScriptedRedis(counter()).start()
    line = redisline.Line(f"redis://127.0.0.1:{server.port}/4")
    try:
        results = await asyncio.gather(*(
            line.execute(("INCR", "k"), ("EXPIRE", "k", 10), ("GET", "k")) for _ in range(50)
        ))
        assert [r[0] for r in results] == list(range(1, 51))
        assert all(r[1] == 1 and r[2] == str(r[0]) for r in results)
        assert await line.execute(("GET", "missing")) == [None]
        assert server.connections == 1
        assert server.commands[0] == ["SELECT", "4"]  # the database, once, before anything else
    finally:
        line.close()
        await server.stop()


async def test_the_batches_of_one_loop_turn_go_out_in_one_write(monkeypatch):
    """Corked: 50 batches sent in the same event-loop turn are one write (one system call)."""
    server = await ScriptedRedis(counter()).start()
    line = redisline.Line(f"redis://127.0.0.1:{server.port}/0")
    try:
        await line.execute(("GET", "k"))  # connected
        transport = line._protocol.transport
        writes = []
        real = transport.write
        monkeypatch.setattr(transport, "write", lambda data: (writes.append(data), real(data)))
        results = await asyncio.gather(*(line.execute(("INCR", "k")) for _ in range(50)))
        assert sorted(r[0] for r in results) == list(range(1, 51))
        assert len(writes) == 1 and writes[0].count(b"INCR") == 50
        await line.execute(("GET", "k"))
        assert len(writes) == 2
    finally:
        line.close()
        await server.stop()


async def test_an_error_reply_raises_and_the_stream_stays_in_step():
    server = await ScriptedRedis(counter()).start()
    line = redisline.Line(f"redis://127.0.0.1:{server.port}")
    try:
        with pytest.raises(redisline.ReplyError, match="boom"):
            await line.execute(("INCR", "k"), ("BOOM",), ("INCR", "k"))
        assert await line.execute(("INCR", "k")) == [3]  # the batch's other replies were read
    finally:
        line.close()
        await server.stop()


async def test_auth_is_sent_on_connect():
    server = await ScriptedRedis(counter()).start()
    line = redisline.Line(f"redis://bench:pw@127.0.0.1:{server.port}/2")
    try:
        await line.execute(("INCR", "k"))
        assert server.commands[:2] == [["AUTH", "bench", "pw"], ["SELECT", "2"]]
    finally:
        line.close()
        await server.stop()


async def test_a_refused_auth_is_an_error_not_a_hang():
    server = await ScriptedRedis(lambda c: b"-WRONGPASS invalid password\r\n").start()
    line = redisline.Line(f"redis://:bad@127.0.0.1:{server.port}")
    try:
        with pytest.raises(redisline.ReplyError, match="WRONGPASS"):
            await line.execute(("INCR", "k"))
    finally:
        line.close()
        await server.stop()


async def test_a_dropped_connection_fails_its_waiters_and_the_next_call_reconnects():
    server = await ScriptedRedis(counter()).start()
    line = redisline.Line(f"redis://127.0.0.1:{server.port}")
    try:
        assert await line.execute(("INCR", "k")) == [1]
        waiting = asyncio.ensure_future(line.execute(("HANG",)))
        await asyncio.sleep(0.05)
        server.drop_connections()  # sent once more, on a new connection
        await asyncio.sleep(0.05)
        assert not waiting.done() and server.connections == 2
        server.drop_connections()  # that one died too: now the caller sees it
        with pytest.raises(ConnectionError):
            await asyncio.wait_for(waiting, 5)
        assert await line.execute(("INCR", "k")) == [2]
        assert server.connections == 3
    finally:
        line.close()
        await server.stop()


async def test_a_batch_whose_connection_dies_under_it_is_sent_once_more():
    """Redis restarted: the connection the batch was written to is dead, the caller never knows."""
    answer = counter()
    server = None

    def drop_the_first_incr(command):
        if command[0] == "INCR" and not getattr(drop_the_first_incr, "done", False):
            drop_the_first_incr.done = True
            server.drop_connections()
            return None
        return answer(command)

    server = await ScriptedRedis(drop_the_first_incr).start()
    line = redisline.Line(f"redis://127.0.0.1:{server.port}")
    try:
        assert await line.execute(("GET", "k")) == [None]  # connected
        assert await asyncio.wait_for(line.execute(("INCR", "k")), 5) == [1]
        assert server.connections == 2
    finally:
        line.close()
        await server.stop()


async def test_a_silent_server_times_out_instead_of_hanging():
    server = await ScriptedRedis(counter()).start()
    line = redisline.Line(f"redis://127.0.0.1:{server.port}", timeout=0.2)
    try:
        with pytest.raises(ConnectionError, match="did not answer"):
            await asyncio.wait_for(line.execute(("HANG",)), 5)
        assert await line.execute(("INCR", "k")) == [1]  # a fresh connection
    finally:
        line.close()
        await server.stop()


async def test_no_server_is_a_connection_error():
    probe = await asyncio.start_server(lambda r, w: None, "127.0.0.1", 0)
    port = probe.sockets[0].getsockname()[1]
    probe.close()
    await probe.wait_closed()
    line = redisline.Line(f"redis://127.0.0.1:{port}")
    with pytest.raises(OSError):
        await line.execute(("INCR", "k"))


async def redis_py_get(key):
    from a2ui.infra import shared

    return await shared.redis_client().get(key)


async def test_short_lived_loops_close_their_connections(settings):
    """async_to_sync outside a server runs each call in a new loop: nothing may stay open."""
    from asgiref.sync import async_to_sync

    from a2ui.infra import shared

    server = await ScriptedRedis(counter()).start()
    settings.A2UI = {"REDIS_URL": f"redis://127.0.0.1:{server.port}/0"}
    try:
        for _ in range(3):
            await asyncio.to_thread(lambda: async_to_sync(shared.next_seq)("s"))
            await asyncio.to_thread(lambda: async_to_sync(shared.current_seq)("s"))
            await asyncio.to_thread(lambda: async_to_sync(redis_py_get)("k"))
        for _ in range(100):
            if server.closed == server.connections:
                break
            await asyncio.sleep(0.01)
        assert server.connections >= 6  # the hot-path line and redis-py, per loop
        assert server.closed == server.connections
    finally:
        await server.stop()
