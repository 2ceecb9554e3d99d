"""a2ui.infra.redisurl (Sentinel URLs, parsed in one place) and redisline's Sentinel discovery
against scripted sentinels and servers (a real failover: tests/live/test_live_sentinel.py)."""

import os
from pathlib import Path

import pytest

from a2ui.apps import default_channel_layers, pubsub_prefix
from a2ui.infra import redisline, redisurl
from tests.infra.test_redisline import ScriptedRedis, counter
from tests.redisserver import own_redis  # noqa: F401  (fixture)

ROOT = Path(__file__).resolve().parents[2]


def test_a_sentinel_url_names_its_sentinels_service_database_and_credentials():
    target = redisurl.parse_sentinel(
        "redis+sentinel://app:s%40cret@s1:26380,s2,[::1]:26390/mymaster/3"
        "?sentinel_password=sp")
    assert target.sentinels == (("s1", 26380), ("s2", 26379), ("::1", 26390))
    assert (target.service, target.db, target.username, target.password) == (
        "mymaster", 3, "app", "s@cret")
    assert target.sentinel_kwargs() == {"password": "sp"}
    assert target.connection_kwargs() == {"db": 3, "username": "app", "password": "s@cret"}
    tls = redisurl.parse_sentinel("rediss+sentinel://h/m?ssl_cert_reqs=none")
    assert tls.connection_kwargs() == {"db": 0, "ssl": True, "ssl_cert_reqs": "none"}


@pytest.mark.parametrize("url, message", [
    ("redis+sentinel://h:26379", "names its service"),
    ("redis+sentinel://h/m/0/extra", "names its service"),
    ("redis+sentinel:///m/0", "no sentinel hosts"),
    ("redis+sentinel://h:port/m", "port that is not a number"),
    ("redis+sentinel://h/m/zero", "database is not a number"),
    ("redis+sentinel://h/m?socket_timeout=1", "unknown Sentinel URL options"),
    ("redis+sentinel://h/m?ssl_cert_reqs=none", "ssl_cert_reqs"),
    ("redis+sentinel://:pw@h:x/m", "port that is not a number"),
])
def test_malformed_sentinel_urls_say_what_is_wrong_without_the_password(url, message):
    with pytest.raises(ValueError, match=message) as caught:
        redisurl.parse_sentinel(url)
    assert "pw" not in str(caught.value)


def test_one_place_for_databases_and_schemes():
    assert redisurl.database("redis+sentinel://h/m/5") == 5
    assert redisurl.database("redis://h/2") == 2 and redisurl.database("redis://h?db=4") == 4
    assert pubsub_prefix("redis+sentinel://a,b/m/7") == "asgi.db7"
    assert pubsub_prefix("redis+sentinel://a/m") == "asgi"
    redisurl.check("unix:///tmp/r.sock")
    with pytest.raises(ValueError, match="unsupported Redis URL scheme"):
        redisurl.check("redis+cluster://h")
    assert redisurl.redact("redis+sentinel://u:pw@a,b/m") == "redis+sentinel://u:***@a,b/m"


def test_the_channel_layer_gets_a_sentinel_host():
    layers = default_channel_layers("redis+sentinel://a:1,b:2/mymaster/1")
    host = layers["default"]["CONFIG"]["hosts"][0]
    assert host["sentinels"] == [["a", 1], ["b", 2]] and host["master_name"] == "mymaster"
    assert host["db"] == 1 and host["socket_timeout"] == 15
    from channels_redis.utils import create_pool

    pool = create_pool(host)  # channels-redis takes it as it is
    assert type(pool).__name__ == "SentinelConnectionPool"
    assert pool.service_name == "mymaster"


def test_the_cache_pool_and_redis_py_pools_follow_the_sentinels():
    pool = redisurl.CachePool.from_url("redis+sentinel://a:1/m/2", socket_timeout=3)
    assert type(pool).__name__ == "SentinelConnectionPool"
    assert pool.connection_kwargs["db"] == 2
    assert type(redisurl.CachePool.from_url("redis://h/1")).__name__ == "ConnectionPool"
    assert type(redisurl.async_pool("redis+sentinel://a/m", blocking_max_connections=5,
                                    timeout=1)).__name__ == "SentinelConnectionPool"
    assert type(redisurl.async_pool("redis://h", blocking_max_connections=5,
                                    timeout=1)).__name__ == "BlockingConnectionPool"


def sentinel_naming(ports):
    """A scripted sentinel that names ``127.0.0.1:ports[0]`` as the primary (a list: change it)."""
    def answer(command):
        if command[:2] == ["SENTINEL", "GET-MASTER-ADDR-BY-NAME"]:
            port = str(ports[0]).encode()
            return b"*2\r\n$9\r\n127.0.0.1\r\n$%d\r\n%s\r\n" % (len(port), port)
        return b"-ERR unknown\r\n"
    return answer


def server_as(role, readonly=False):
    inner = counter()

    def answer(command):
        if command[0] == "ROLE":
            return b"*1\r\n$%d\r\n%s\r\n" % (len(role[0]), role[0].encode())
        if readonly[0] if isinstance(readonly, list) else readonly:
            if command[0] == "INCR":
                return b"-READONLY You can't write against a read only replica.\r\n"
        return inner(command)
    return answer


async def test_the_line_asks_the_sentinels_and_follows_a_failover():
    old_role, old_readonly = ["master"], [False]
    old = await ScriptedRedis(server_as(old_role, old_readonly)).start()
    new = await ScriptedRedis(server_as(["master"])).start()
    named = [old.port]
    dead = await ScriptedRedis(lambda c: None).start()
    await dead.stop()  # a sentinel that is down: the next one is asked
    sentinel = await ScriptedRedis(sentinel_naming(named)).start()
    line = redisline.Line(f"redis+sentinel://127.0.0.1:{dead.port},127.0.0.1:{sentinel.port}/m/2")
    try:
        assert await line.execute(("INCR", "k")) == [1]
        assert old.commands[:2] == [["SELECT", "2"], ["ROLE"]]
        assert line.sentinels[0] == ("127.0.0.1", sentinel.port)  # asked first from now on
        # The old primary is demoted under the line: its READONLY reply sends the batch once
        # more to the primary the sentinels name now.
        named[0], old_role[0], old_readonly[0] = new.port, "slave", True
        assert await line.execute(("INCR", "k")) == [1]
        assert new.commands[-1] == ["INCR", "k"]
        # A server the sentinels still name but that is a replica is refused.
        named[0] = old.port
        line.close()
        with pytest.raises(redisline.NotPrimary, match="not the primary"):
            await line.execute(("INCR", "k"))
    finally:
        line.close()
        for server in (old, new, sentinel):
            await server.stop()


async def test_no_sentinel_answering_is_a_connection_error():
    dead = await ScriptedRedis(lambda c: None).start()
    await dead.stop()
    line = redisline.Line(f"redis+sentinel://127.0.0.1:{dead.port}/m")
    with pytest.raises(ConnectionError, match="no sentinel named the primary 'm'"):
        await line.execute(("PING",))


def test_a_malformed_redis_url_is_a_system_check_error(settings):
    from a2ui.checks import check_a2ui_settings

    settings.A2UI = {"REDIS_URL": "redis+sentinel://h:26379"}
    errors = [e for e in check_a2ui_settings(None) if e.id == "a2ui.E009"]
    assert len(errors) == 1 and "names its service" in errors[0].msg
    settings.A2UI = {"REDIS_URL": "redis+sentinel://h:26379/mymaster/0"}
    assert [e for e in check_a2ui_settings(None) if e.id == "a2ui.E009"] == []


@pytest.mark.parametrize("url, says", [
    ("redis://[::1:6379/0", "Invalid IPv6 URL in redis://[::1:6379/0"),
    ("redis://u:secret@h:99999/0", "Port out of range 0-65535 in redis://u:***@h:99999/0"),
    ("redis://h:abc/0", "Port could not be cast to integer"),
    ("redis://h:6379/x", "the database is not a number"),
    ("redis://h:6379/0?db=x", "the database is not a number"),
    ("unix://", "names its socket's path"),
    ("http://h:6379/0", "unsupported Redis URL scheme 'http'"),
])
def test_each_unusable_redis_url_is_said_without_its_password(url, says):
    with pytest.raises(ValueError) as raised:
        redisurl.check(url)
    assert says in str(raised.value) and "secret" not in str(raised.value)


@pytest.mark.parametrize("url", [
    "redis://h", "redis://h:6379", "redis://h:6379/", "redis://u:p@h:6379/3", "rediss://h/1",
    "redis://h:6379?db=2", "redis://[::1]:6379/0", "unix:///run/redis.sock?db=1",
    "redis+sentinel://h:26379/mymaster/0",
])
def test_redis_urls_that_redis_py_takes_pass(url):
    redisurl.check(url)


def test_an_unusable_redis_url_is_a_check_error_not_a_startup_traceback(tmp_path):
    """Django starts (the app's ready() builds no layer from it) and every command that runs
    the system checks stops with a2ui.E009 alone."""
    import subprocess
    import sys

    env = {**os.environ, "REDIS_URL": "redis://u:secret@[::1:6379/0",
           "DJANGO_SETTINGS_MODULE": "a2ui_project.settings"}
    for name in ("A2UI_REDIS_SHARDS", "PYTEST_XDIST_WORKER", "A2UI_TEST_WORKER_REDIS"):
        env.pop(name, None)  # (the test project's settings give an xdist worker its own db)
    done = subprocess.run([sys.executable, "manage.py", "check"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 1, done.stderr
    assert "a2ui.E009" in done.stderr and "Traceback" not in done.stderr, done.stderr
    assert "a2ui.E011" not in done.stderr and "secret" not in done.stderr


async def test_a_data_set_with_another_history_re_epochs_every_counter(own_redis):  # noqa: F811
    """A promoted replica (or a server restarted from a snapshot) has another replication id:
    every sequence counter takes a new epoch before the hot path uses the server; the same
    history again changes nothing."""
    from a2ui.infra import redisstate

    own_redis.command("HSET", "a2ui:ss:a", "n", 7, "e", "old", "s", 2, "f", 1)
    own_redis.command("HSET", "a2ui:ss:b", "n", 3, "e", "old", "s", 1)
    own_redis.command("SET", "a2ui:history", "another-primary")
    line = redisline.Line(own_redis.url(), on_connect=redisstate.check_history)
    try:
        a, b = [dict(zip(flat[::2], flat[1::2], strict=True)) for flat in await line.execute(
            ("HGETALL", "a2ui:ss:a"), ("HGETALL", "a2ui:ss:b"))]
        epoch = a["e"]
        assert epoch != "old" and b["e"] == epoch
        assert a == {"n": "7", "e": epoch, "s": "0"} and b == {"n": "3", "e": epoch, "s": "0"}
        info = own_redis.command("INFO", "replication")
        assert own_redis.command("GET", "a2ui:history").decode() == info["master_replid"]
        line.close()  # a new connection to the same history: nothing changes
        assert (await line.execute(("HGET", "a2ui:ss:a", "e"))) == [epoch]
    finally:
        line.close()


def test_every_redis_py_connection_speaks_resp2_whatever_redis_pys_default():
    """redis-py 8.2 made RESP3 its default: the app keeps RESP2 (what the hot-path line and
    channels-redis's pub/sub read), for servers and sentinels alike, unless a caller names one."""
    from a2ui.infra import redisurl

    sentinel_url = "redis+sentinel://s1:26379,s2/mymaster/0"
    pools = [redisurl.async_pool("redis://127.0.0.1:6379/0"),
             redisurl.async_pool("redis://127.0.0.1:6379/0", blocking_max_connections=4),
             redisurl.async_pool(sentinel_url),
             redisurl.CachePool.from_url("redis://127.0.0.1:6379/0"),
             redisurl.CachePool.from_url(sentinel_url)]
    assert [p.connection_kwargs["protocol"] for p in pools] == [2] * 5
    for pool in pools[2::2]:  # the Sentinel pools: their sentinels too
        assert {s.connection_pool.connection_kwargs["protocol"]
                for s in pool.sentinel_manager.sentinels} == {2}
    hosts = [redisurl.layer_host("redis://h/0"), redisurl.layer_host(sentinel_url)]
    assert [h["protocol"] for h in hosts] == [2, 2]
    assert hosts[1]["sentinel_kwargs"]["protocol"] == 2
    assert redisurl.async_pool("redis://h/0", protocol=3).connection_kwargs["protocol"] == 3
