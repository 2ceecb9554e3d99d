"""``A2UI['REDIS_SHARDS']``: each session's state on its shard, the rest on ``REDIS_URL``, the
channel layer's session groups on the session's shard; against two redis-servers of the
test's own."""

import asyncio
import shutil
import uuid

import pytest

from a2ui.infra import leases, shared
from a2ui.infra.redisstate.sharded import ShardedBackend, shard_list
from tests.redisserver import RedisServer


@pytest.fixture
def two():
    servers = [RedisServer().start(), RedisServer().start()]
    yield servers
    for server in servers:
        server.stop()
        shutil.rmtree(server.dir, ignore_errors=True)


@pytest.fixture
def sharded(settings, two):
    main, other = two
    settings.A2UI = {**getattr(settings, "A2UI", {}), "REDIS_URL": main.url(),
                     "REDIS_SHARDS": [main.url(), other.url()]}
    backend = shared.backend()
    assert isinstance(backend, ShardedBackend)
    return backend


def split_sessions(backend, n=3):
    """``n`` session hexes on each shard: ``([on main], [on the other])``."""
    found = ([], [])
    while min(len(found[0]), len(found[1])) < n:
        sid = uuid.uuid4().hex
        found[backend.map.index(sid)].append(sid)
    return found[0][:n], found[1][:n]


def keys(server, pattern="a2ui:*"):
    return {k.decode() for k in server.command("KEYS", pattern)}


async def test_a_sessions_state_is_on_its_shard_and_the_rest_on_the_main_server(sharded, two):
    main, other = two
    mine, theirs = split_sessions(sharded, 2)
    for sid in mine + theirs:
        epoch = await shared.socket_opened(sid, fresh=True)
        assert await shared.next_seq_and_sockets(sid) == (1, epoch, 1)
        await shared.cache_session(sid, 7, 9)
    assert await shared.cached_session(theirs[0]) == ("7", "9")
    await shared.hit_rate_limit("agent:1", 10)
    on_main, on_other = keys(main), keys(other)
    for sid in mine:
        assert f"a2ui:ss:{sid}" in on_main and f"a2ui:ss:{sid}" not in on_other
    for sid in theirs:
        assert f"a2ui:ss:{sid}" in on_other and f"a2ui:live:{sid}" in on_other
        assert f"a2ui:ss:{sid}" not in on_main and f"a2ui:live:{sid}" not in on_main
    assert any(k.startswith("a2ui:rl:agent:1") for k in on_main)
    assert not any(k.startswith("a2ui:rl:") for k in on_other)
    # each shard counts its own sessions' numbers on its own clock
    assert "a2ui:seqclock" in on_main and "a2ui:seqclock" in on_other


async def test_sequence_states_and_the_clock_read_every_shard(sharded, two):
    mine, theirs = split_sessions(sharded, 2)
    for n, sid in enumerate(mine + theirs):
        for _ in range(n + 1):
            await shared.next_seq(sid)
    order = [theirs[1], mine[0], theirs[0], mine[1]]
    states = await shared.sequence_states(order)
    assert [seq for seq, _ in states] == [4, 1, 3, 2]
    epoch, buckets = await shared.sequence_clock()
    assert epoch.count("|") == 1
    assert sum(buckets.values()) == 1 + 2 + 3 + 4
    assert {shared.clock_bucket(sid) for sid in mine + theirs} <= set(buckets)
    # one shard losing its keys is a new epoch of the whole clock
    two[1].flushdb()
    assert (await shared.sequence_clock())[0] != epoch


async def test_leases_of_sessions_are_on_their_shards_and_refreshed_on_each(sharded, two):
    main, other = two
    mine, theirs = split_sessions(sharded, 1)
    held = [await leases.acquire([leases.Scope(shared.clients_key(sid))], 30, tag="t")
            for sid in mine + theirs]
    cap = await leases.acquire([leases.Scope("a2ui:cap:socket:token:abc", 5)], 30)
    assert shared.clients_key(theirs[0]) in keys(other)
    assert shared.clients_key(theirs[0]) not in keys(main)
    assert "a2ui:cap:socket:token:abc" in keys(main)
    backend = leases.backend()
    await backend.refresh(held + [cap], 30_000)
    every = [shared.clients_key(mine[0]), shared.clients_key(theirs[0]),
             "a2ui:cap:socket:token:abc"]
    assert await backend.alive(every) == [True, True, True]
    for lease in held + [cap]:
        await lease.release()
    assert await backend.alive(every) == [False, False, False]


async def test_a_batch_for_two_servers_is_refused_before_anything_runs(sharded, two):
    mine, theirs = split_sessions(sharded, 1)
    with pytest.raises(ValueError):
        await sharded.execute(("SET", f"a2ui:live:{mine[0]}", "x"),
                              ("SET", f"a2ui:live:{theirs[0]}", "x"))
    with pytest.raises(ValueError):
        await sharded.execute(("SET", f"a2ui:live:{theirs[0]}", "x"), ("INCR", "a2ui:rl:y:1"))
    assert keys(two[0]) == keys(two[1]) == set()


def test_shards_are_named_by_url_or_by_the_projects_names():
    assert shard_list(["redis://u:p@h:1/0"]) == [("redis://h:1/0", "redis://u:p@h:1/0")]
    assert shard_list({"east": "redis://h:1/0"}) == [("east", "redis://h:1/0")]


async def test_the_layer_publishes_a_sessions_group_on_its_shard(sharded, two):
    """The default layer with shards: a session's group is subscribed and published on the
    server that holds the session's state, through that server's pipelined connection."""
    from a2ui.apps import default_channel_layers
    from a2ui.infra import groups
    from a2ui.layer import PubSubChannelLayer

    main, other = two
    config = default_channel_layers(main.url(), [main.url(), other.url()])["default"]["CONFIG"]
    layer = PubSubChannelLayer(**config)
    mine, theirs = split_sessions(sharded, 1)
    try:
        for sid, server, elsewhere in ((mine[0], main, other), (theirs[0], other, main)):
            channel = await layer.new_channel()
            group = groups.session_group(uuid.UUID(sid))
            await layer.group_add(group, channel)
            name = layer._get_layer()._get_group_channel_name(group)
            assert server.command("PUBSUB", "NUMSUB", name)[1] == 1
            assert elsewhere.command("PUBSUB", "NUMSUB", name)[1] == 0
            receiving = asyncio.ensure_future(layer.receive(channel))
            await layer.group_send(group, {"type": "a2ui.ping", "n": sid})
            assert (await asyncio.wait_for(receiving, 3))["n"] == sid
            loop_layer = layer._get_layer()
            index = loop_layer._shard_index(name)
            assert loop_layer.publisher(index) is shared.hot_line(server.url())
    finally:
        await layer.flush()


async def test_processes_placing_sessions_differently_are_not_ready(sharded, two, monkeypatch):
    """The first process records its shards on the main server; one with another list (a
    rolling deploy that adds a shard, a process left on one server) fails readiness until no
    process has renewed the record for ``SHARDS_TTL``."""
    from a2ui.infra import redisstate as sharded_module
    from a2ui.infra.redisstate import RedisBackend

    main, other = two
    await sharded.agree()
    alone = RedisBackend(main.url())
    with pytest.raises(sharded_module.ShardsDiffer):
        await alone.agree()
    await sharded.agree()  # the record's own processes stay ready
    assert 0 < int(main.command("TTL", sharded_module.SHARDS_KEY)) <= sharded_module.SHARDS_TTL
    main.command("EXPIRE", sharded_module.SHARDS_KEY, 0)  # every old process gone that long
    await alone.agree()
    # processes without shards agree however they spell the server's URL
    await RedisBackend(main.url().replace("127.0.0.1", "localhost")).agree()
    with pytest.raises(sharded_module.ShardsDiffer):
        await sharded.agree()


async def test_readiness_fails_when_a_shard_is_down(sharded, two):
    from a2ui.infra import health

    await health.check_redis()
    two[1].stop()
    with pytest.raises(Exception):  # noqa: B017 (the connection's own error)
        await health.check_redis()


@pytest.mark.parametrize("a2ui, says", [
    ({"REDIS_URL": None, "REDIS_SHARDS": ["redis://h:1/0"]}, "REDIS_URL'] is not"),
    ({"REDIS_URL": "redis://h:1/0", "REDIS_SHARDS": "redis://h:1/0"}, "must be a list"),
    ({"REDIS_URL": "redis://h:1/0", "REDIS_SHARDS": ["redis://h:1/0", "redis://u:p@h:1/0"]},
     "twice"),
    ({"REDIS_URL": "redis://h:1/0", "REDIS_SHARDS": {"a": "redis://h:1/0", "b": "http://x"}},
     "['b'] is not usable"),
    ({"REDIS_URL": "redis://h:1/0", "REDIS_SHARDS": ["redis://h:1/0", "redis://[::1:6379/0"]},
     "[1] is not usable: Invalid IPv6 URL in redis://[::1:6379/0"),
    ({"REDIS_URL": "redis://h:1/0", "REDIS_SHARDS": ["redis://u:pw@h:99999/0"]},
     "[0] is not usable: Port out of range 0-65535 in redis://u:***@h:99999/0"),
    ({"REDIS_URL": "redis://h:1/0", "REDIS_SHARDS": ["redis://h:1/0", 5]}, "is a string"),
])
def test_a_bad_shard_list_is_a_system_check_error(settings, a2ui, says):
    from a2ui.checks import check_a2ui_settings

    settings.A2UI = a2ui
    errors = [e for e in check_a2ui_settings(None) if e.id == "a2ui.E024"]
    assert len(errors) == 1 and says in errors[0].msg, errors
    settings.A2UI = {"REDIS_URL": "redis://h:1/0",
                     "REDIS_SHARDS": {"a": "redis://h:1/0", "b": "redis://g:1/0"}}
    assert [e for e in check_a2ui_settings(None) if e.id == "a2ui.E024"] == []


async def test_two_backends_on_one_loop_keep_each_others_connections(two):
    """Each backend's connections on a loop are closed when the loop shuts down, by a closer
    the loop keeps: the second backend's must not replace (and so finalize) the first's."""
    import gc

    from a2ui.infra.redisstate import RedisBackend

    first, second = RedisBackend(two[0].url()), RedisBackend(two[1].url())
    assert await first.execute(("PING",)) == ["PONG"]
    assert await second.execute(("PING",)) == ["PONG"]
    protocol = first.line()._protocol
    gc.collect()
    await asyncio.sleep(0.05)
    assert protocol.lost is None and first.line()._protocol is protocol


async def test_a_shard_away_leaves_the_others_sessions_checked(sharded, two):
    """While one shard is down the sequence watch goes on for the others' sessions: their
    states are read, the absent shard's are None (judged when it answers), and the clock's
    epoch is new at each reading, so every session is read."""
    from a2ui.consumers import seqwatch

    mine, theirs = split_sessions(sharded, 1)
    for sid in mine + theirs:
        await shared.next_seq(sid)
    epoch, _ = await shared.sequence_clock()
    two[1].stop()
    assert await shared.sequence_states([mine[0], theirs[0]]) == [
        (1, (await shared.current_seq(mine[0]))[1]), None]
    first, buckets = await shared.sequence_clock()
    second, _ = await shared.sequence_clock()
    assert len({epoch, first, second}) == 3
    assert all(bucket.startswith("0.") for bucket in buckets)

    class Consumer:
        loop = asyncio.get_running_loop()
        last_seq, epoch, _deferred, _in_hand, _turn = 1, "e", None, False, None

        def __init__(self):
            self.taken = []

        async def take_direct(self, message):
            self.taken.append(message)

    away, here = Consumer(), Consumer()
    here.epoch = (await shared.current_seq(mine[0]))[1]
    from a2ui.push import direct

    direct.register(theirs[0], away)
    direct.register(mine[0], here)
    try:
        suspects = {away: (2, 1)}
        found = await seqwatch.check(suspects, {})
        assert found == {away: (2, 1)} and away.taken == [] and here.taken == []
    finally:
        direct.unregister(theirs[0], away)
        direct.unregister(mine[0], here)
    two[0].stop()  # every server away: the round fails as with one server
    with pytest.raises(ConnectionError):
        await shared.sequence_states([mine[0], theirs[0]])
