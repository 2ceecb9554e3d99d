"""What the soak benchmark found (docs/performance.md): closed sockets' memory, and per-message
database work queued behind the one thread-sensitive thread."""

import asyncio
import gc
import threading

import pytest
from asgiref.sync import sync_to_async
from django.db import connection

from a2ui.infra import dbthreads, memory
from a2ui.jsonrpc.agent import A2UIAgentConsumer
from a2ui.jsonrpc.consumer import A2UIUserConsumer
from tests.wsutil import connect_agent, connect_user, init_session, recv, send

pytestmark = pytest.mark.django_db(transaction=True)


def live_consumers():
    kinds = (A2UIUserConsumer, A2UIAgentConsumer)
    return [o for o in gc.get_objects() if type(o) in kinds]  # type(): no weak proxy check


@pytest.fixture
def no_automatic_gc(monkeypatch):
    """The serving process collects rarely (a2ui_project/asgi.py): here, not at all."""
    memory.reset()
    monkeypatch.setattr(memory, "MIN_CLOSED", 2)
    monkeypatch.setattr(memory, "DELAY_SECONDS", 0.01)
    gc.collect()
    gc.disable()
    yield
    gc.enable()
    memory.reset()


async def test_closed_sockets_are_collected_without_automatic_gc(
    no_automatic_gc, stream_token, agent_key
):
    # (consumers that earlier tests abandoned without a disconnect are not this test's)
    before = {id(c) for c in live_consumers()}
    agent = await connect_agent(agent_key)
    user = await connect_user(stream_token)
    await init_session(user)
    assert len([c for c in live_consumers() if id(c) not in before]) == 2
    await user.disconnect()
    await agent.disconnect()
    del user, agent
    await asyncio.sleep(0.2)
    # their cycles were collected once they closed
    assert [c for c in live_consumers() if id(c) not in before] == []
    assert memory.counts.open == 0 and memory.counts.collections == 1


async def test_no_collection_while_sockets_only_open(no_automatic_gc, stream_token, agent_key):
    agent = await connect_agent(agent_key)
    user = await connect_user(stream_token)
    await init_session(user)
    await asyncio.sleep(0.05)
    assert memory.counts.collections == 0
    await user.disconnect()
    await agent.disconnect()


@pytest.mark.skipif(connection.vendor != "postgresql",
                    reason="per-message DB work runs on a pool only on PostgreSQL")
async def test_a_render_does_not_wait_for_the_thread_sensitive_thread(stream_token, agent_key):
    """A slow call on the one thread-sensitive thread (a metrics flush, the housekeeping sweep,
    a snapshot) must not hold up every agent's ui.render behind it."""
    agent = await connect_agent(agent_key)
    user = await connect_user(stream_token)
    sid = await init_session(user)
    release = threading.Event()
    blocker = asyncio.ensure_future(sync_to_async(release.wait)(5))  # thread_sensitive
    try:
        await asyncio.sleep(0.05)
        await send(agent, {"jsonrpc": "2.0", "id": 7, "method": "ui.render", "params": {
            "session_id": sid, "component_id": "c", "component_type": "card",
            "data": {"title": "T"}}})
        reply = await recv(agent, timeout=2)
        while reply.get("id") != 7:
            reply = await recv(agent, timeout=2)
        assert reply["result"]["delivered"] is True
        assert not blocker.done()
    finally:
        release.set()
        await blocker
    await user.disconnect()
    await agent.disconnect()


async def test_calls_inside_async_to_sync_stay_on_the_calling_thread():
    """A sync caller may hold a transaction another thread's connection would not see."""
    from asgiref.sync import async_to_sync

    assert dbthreads.concurrent_ok() == (connection.vendor == "postgresql")
    assert await sync_to_async(async_to_sync(_inside))() is False


async def _inside():
    return dbthreads.concurrent_ok()


def _synchronous_commit():
    with connection.cursor() as cursor:
        cursor.execute("SHOW synchronous_commit")
        return cursor.fetchone()[0]


def _inside_and_after():
    with dbthreads.relaxed_commit():
        inside = _synchronous_commit()
    return inside, _synchronous_commit()


@pytest.mark.skipif(connection.vendor != "postgresql", reason="a PostgreSQL setting")
async def test_per_message_commits_do_not_wait_for_the_disk_and_the_connection_is_reset(
        settings):
    """A commit that waits for the WAL flush held each agent socket's next push (the soak);
    turning the wait off is the operator's choice (durability first by default)."""
    assert await dbthreads.run(_synchronous_commit) == "on"  # the default keeps the wait
    assert await sync_to_async(_inside_and_after)() == ("on", "on")
    settings.A2UI = {**getattr(settings, "A2UI", {}), "PER_MESSAGE_SYNCHRONOUS_COMMIT": False}
    assert await dbthreads.run(_synchronous_commit) == "off"
    assert await sync_to_async(_inside_and_after)() == ("off", "on")


@pytest.mark.skipif(connection.vendor != "postgresql",
                    reason="per-message DB work runs on a pool only on PostgreSQL")
async def test_a_socket_opens_while_the_thread_sensitive_thread_is_busy(stream_token):
    """Sockets opening at once must not queue their auth lookups behind every a2ui.init (Daphne
    drops a handshake that takes over 5 s)."""
    release = threading.Event()
    blocker = asyncio.ensure_future(sync_to_async(release.wait)(5))  # thread_sensitive
    try:
        await asyncio.sleep(0.05)
        user = await asyncio.wait_for(connect_user(stream_token), 2)
        assert not blocker.done()
    finally:
        release.set()
        await blocker
    await user.disconnect()


def test_the_collection_empties_what_closed_sockets_leave_in_caches():
    """Entries made while the sockets were busy keep whole arenas of the small-object allocator
    alive after the sockets closed (docs/performance.md): the collection empties them."""
    import urllib.parse

    from a2ui.core import events
    from a2ui.jsonrpc import events as wire
    from a2ui.sessions import counters as metrics

    wire.encode_cached("s1", events.to_message(events.Kind.NOTIFY,
                                               {"level": "info", "title": "x"}, 1, "e"))
    metrics._activated["a-session"] = None
    urllib.parse.urlsplit("ws://127.0.0.1/ws/v4/a2ui?token=one-of-a-kind")
    assert wire._cache and metrics._activated and urllib.parse.urlsplit.cache_info().currsize
    memory.collect()
    assert not wire._cache and not metrics._activated
    assert urllib.parse.urlsplit.cache_info().currsize == 0
    memory.reset()


def test_the_activated_sessions_are_bounded_and_still_activated(monkeypatch, user):
    """Real rows on either database: every pushed session becomes active, and the memory of
    which ones already are keeps only the newest."""
    from a2ui.models import A2UISessionLog
    from a2ui.sessions import counters as metrics

    monkeypatch.setattr(metrics, "MAX_ACTIVATED", 4)
    monkeypatch.setattr(metrics, "_activated", {})
    rows = [A2UISessionLog.objects.create(user=user, state="initialized") for _ in range(10)]
    for row in rows:
        counts = metrics._Counts()
        counts.pushed = counts.messages = 1
        metrics._write({str(row.session_id): counts})
    assert 0 < len(metrics._activated) <= 4
    assert str(rows[-1].session_id) in metrics._activated  # the newest are kept
    states = set(A2UISessionLog.objects.filter(pk__in=[r.pk for r in rows])
                 .values_list("state", flat=True))
    assert states == {"active"}


async def test_event_streams_count_as_sockets(no_automatic_gc):
    """A server-sent event stream (AG-UI 1.0 runs, MCP streams) counts as a socket while it is
    open, so that a mass close of streams is collected too; a plain response does not."""
    from a2ui.asgi import _CountedStreams

    seen = []

    async def app(scope, receive, send):
        kind = b"text/event-stream" if scope["path"] == "/stream" else b"application/json"
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"content-type", kind)]})
        seen.append(memory.counts.open)
        await send({"type": "http.response.body", "body": b""})

    async def send(message):
        pass

    counted = _CountedStreams(app)
    await counted({"type": "http", "path": "/stream"}, None, send)
    await counted({"type": "http", "path": "/json"}, None, send)
    assert seen == [1, 0]
    assert memory.counts.open == 0 and memory.counts.closed == 1


def test_shrink_gives_back_a_tables_peak_in_place():
    """A dict or set keeps the table it grew to as entries leave; ``memory.shrink`` gives it
    back without replacing the object."""
    import sys

    d = {f"channel-{i}": i for i in range(10000)}
    s = set(d)
    empty = dict(d)
    peak = sys.getsizeof(d), sys.getsizeof(s), sys.getsizeof(empty)
    for key in list(d)[3:]:
        del d[key]
        s.discard(key)
    empty.clear()
    empty.update({"x": 1})
    del empty["x"]
    same = d, s, empty
    assert (sys.getsizeof(d), sys.getsizeof(s)) == peak[:2]  # CPython never shrinks them
    for container in same:
        memory.shrink(container)
    assert (d, s, empty) == ({f"channel-{i}": i for i in range(3)},
                             {f"channel-{i}" for i in range(3)}, {})
    assert all(a is b for a, b in zip((d, s, empty), same, strict=True))
    assert sys.getsizeof(d) < peak[0] / 50 and sys.getsizeof(s) < peak[1] / 50


def test_registries_are_shrunk_at_the_collection_and_held_weakly():
    import sys

    class Owner:
        def __init__(self):
            self.table = {i: i for i in range(5000)}

        def registries(self):
            return [self.table, "not a container"]

    owner = Owner()
    memory.register(owner.registries)
    peak = sys.getsizeof(owner.table)
    owner.table.clear()
    owner.table[1] = 1
    memory.collect()
    memory.reset()
    assert owner.table == {1: 1} and sys.getsizeof(owner.table) < peak / 50
    before = len(memory.REGISTRIES)
    del owner
    gc.collect()
    memory.register(lambda: [])  # registering drops the entries whose owner is gone
    assert len(memory.REGISTRIES) == before
    memory.REGISTRIES.pop()


async def test_the_server_names_its_table_of_connections():
    import sys

    from a2ui import serving

    server = serving.build_server(lambda *a: None, ["tcp:port=0"])
    assert server.registries() == []  # until it runs
    server.connections = {f"c{i}": None for i in range(5000)}
    peak = sys.getsizeof(server.connections)
    server.connections.clear()
    assert server.registries()[0] is server.connections
    memory.shrink_registries()
    assert sys.getsizeof(server.connections) < peak / 50


# The collection's steps that rely on a library's internals (memory.PRIVATE_STEPS): a test per
# library, which fails when the internal its step relies on changes.


def step(name):
    memory.PRIVATE_STEPS[name]()


def grown_then_shrunk(tables, empty, name):
    """``tables`` keep their peak once ``empty()`` emptied them; the step ``name`` gives it
    back in place."""
    import sys

    peaks = [sys.getsizeof(t) for t in tables]
    empty()
    gc.collect()
    assert [sys.getsizeof(t) for t in tables] == peaks  # CPython never shrinks them
    step(name)
    after = [sys.getsizeof(t) for t in tables]
    assert all(a < p / 4 for a, p in zip(after, peaks, strict=True)), (after, peaks)


def test_the_type_cache_is_cleared():
    """CPython's cache of attribute lookups per type: the step fails if ``sys._clear_type_cache``
    goes (CPython may replace it)."""
    import sys

    assert callable(sys._clear_type_cache)
    step("typecache")


def test_every_step_has_its_test():
    assert set(memory.PRIVATE_STEPS) == {"asyncio", "typecache"}


def registered():
    """Every container the collection shrinks now (``memory.REGISTRIES``)."""
    return [c for ref in memory.REGISTRIES if ref() is not None for c in ref()()]


def among(table, containers):
    return any(table is c for c in containers)  # not ==: empty tables are all equal


async def test_asyncios_set_of_tasks_and_the_selectors_map_are_shrunk():
    import asyncio
    import socket

    loop = asyncio.get_running_loop()
    tasks = [loop.create_task(asyncio.sleep(0)) for _ in range(3000)]
    pairs = [socket.socketpair() for _ in range(200)]
    for a, _ in pairs:
        loop.add_reader(a.fileno(), lambda: None)
    tables = [asyncio.tasks._all_tasks.data, loop._selector._fd_to_key]
    assert len(tables[0]) >= 3000 and len(tables[1]) >= 200  # they are what grew

    async def ended():
        for task in tasks:
            await task

    await ended()

    def empty():
        tasks.clear()
        for a, b in pairs:
            loop.remove_reader(a.fileno())
            a.close()
            b.close()

    grown_then_shrunk(tables, empty, "asyncio")
    assert tables[0] is asyncio.tasks._all_tasks.data
    assert tables[1] is loop._selector._fd_to_key


def test_the_caps_live_leases_are_shrunk():
    import sys

    from a2ui.infra import leases

    class Thing:
        pass

    things = [Thing() for _ in range(3000)]
    for i, thing in enumerate(things):
        leases._live[f"lease-{i}"] = thing
    table = leases._live.data
    assert among(table, registered())
    peak = sys.getsizeof(table)
    things.clear()
    gc.collect()
    memory.shrink_registries()
    assert sys.getsizeof(table) < peak / 4 and table is leases._live.data
