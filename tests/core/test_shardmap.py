"""``a2ui.core.shardmap``: rendezvous hashing of sessions over named Redis shards, and which
session a Redis key belongs to."""

import uuid

import pytest

from a2ui.core.shardmap import ShardMap, keys_of, session_of, shard_name

IDS = [uuid.UUID(int=n * 7919 + 12345).hex for n in range(6000)]


def placement(shards):
    return {sid: shards.names[shards.index(sid)] for sid in IDS}


def test_the_order_of_the_names_does_not_matter():
    assert placement(ShardMap(["a", "b", "c"])) == placement(ShardMap(["c", "a", "b"]))


def test_sessions_spread_evenly():
    for n in (2, 3, 5):
        shards = ShardMap([f"redis://10.0.0.{i}:6379/0" for i in range(n)])
        counts = [0] * n
        for sid in IDS:
            counts[shards.index(sid)] += 1
        assert max(counts) / min(counts) < 1.15, counts


def test_adding_a_shard_moves_only_the_sessions_it_takes():
    before, after = placement(ShardMap(["a", "b"])), placement(ShardMap(["a", "b", "c"]))
    moved = [sid for sid in IDS if before[sid] != after[sid]]
    assert all(after[sid] == "c" for sid in moved)
    assert 0.28 < len(moved) / len(IDS) < 0.39


def test_removing_a_shard_moves_only_its_sessions():
    before, after = placement(ShardMap(["a", "b", "c"])), placement(ShardMap(["a", "c"]))
    assert all(before[sid] == "b" for sid in IDS if before[sid] != after[sid])


def test_names_must_be_distinct_and_present():
    for names in ([], ["a", "a"]):
        with pytest.raises(ValueError):
            ShardMap(names)


def test_a_shard_is_named_by_its_url_without_credentials():
    assert shard_name("redis://user:secret@10.0.0.1:6379/2") == "redis://10.0.0.1:6379/2"
    assert shard_name("redis://10.0.0.1:6379/2?x=1") == "redis://10.0.0.1:6379/2"


def test_the_keys_a_command_names():
    assert keys_of(("HINCRBY", "a2ui:ss:x", "n", 1)) == ("a2ui:ss:x",)
    assert keys_of(("EVAL", "return 1", 2, "k1", "k2", "arg")) == ("k1", "k2")
    assert keys_of(("DEL", "k1", "k2")) == ("k1", "k2")
    assert keys_of(("PING",)) == () and keys_of(("SCAN", "0", "MATCH", "a2ui:ss:*")) == ()


def test_the_session_a_key_belongs_to():
    sid = IDS[0]
    for key in (f"a2ui:ss:{sid}", f"a2ui:live:{sid}", f"a2ui:cap:client:session:{sid}",
                f"a2ui:run:{sid}:{'0' * 32}", f"a2ui:rlog:{sid}:ab", f"a2ui:ratt:{sid}:ab",
                f"a2ui:raway:{sid}:ab"):
        assert session_of(key) == sid, key
    for key in ("a2ui:seqclock", f"a2ui:cap:socket:token:{sid}", f"a2ui:rl:{sid}:1",
                f"a2ui:ss:{sid}x", "a2ui:presence:agent:1"):
        assert session_of(key) is None, key


def test_a_batch_runs_on_one_shard_or_is_refused():
    shards = ShardMap(["a", "b"])
    one = next(sid for sid in IDS if shards.index(sid) == 0)
    two = next(sid for sid in IDS if shards.index(sid) == 1)
    assert shards.target([("HINCRBY", f"a2ui:ss:{two}", "n", 1),
                          ("HINCRBY", "a2ui:seqclock", "7", 1)]) == (1, False)
    assert shards.target([("INCR", "a2ui:rl:x:1"), ("PING",)]) == (None, True)
    assert shards.target([("GET", f"a2ui:live:{one}"), ("INCR", "a2ui:rl:x:1")]) == (0, True)
    with pytest.raises(ValueError):
        shards.target([("GET", f"a2ui:live:{one}"), ("GET", f"a2ui:live:{two}")])
