"""The capacity model's arithmetic (bench/capacity_model.py)."""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

from capacity_model import capacity  # noqa: E402

BASE = dict(kb_per_session=40, base_mb=100, memory_mb=500, cpu_us_per_push=500,
            pushes_per_session_s=0.1, cpu_share=0.5, redis_cmds_per_push=2,
            redis_bytes_per_push=500, redis_cmds_per_s=100_000, redis_bytes_per_s=10_000_000)


def test_memory_bound():
    c = capacity(**BASE)
    assert c.sessions_by_memory == 400 * 1024 // 40 == 10240
    assert c.sessions_by_cpu == 10000  # 0.5 s of CPU / (500 us x 0.1 push/s)
    assert c.sessions_per_process == 10000 and c.limited_by == "cpu"


def test_processes_per_redis_takes_the_tighter_of_commands_and_bytes():
    c = capacity(**BASE)
    # 10,000 sessions x 0.1/s = 1,000 pushes/s per process: 2,000 commands/s (50 processes)
    # and 500,000 bytes/s (20 processes).
    assert c.processes_per_redis == 20


def test_memory_limited():
    c = capacity(**{**BASE, "memory_mb": 200})
    assert c.sessions_by_memory == 2560 and c.limited_by == "memory"
    assert c.sessions_per_process == 2560


def test_refuses_non_positive_costs():
    with pytest.raises(ValueError):
        capacity(**{**BASE, "kb_per_session": 0})


def test_compare_a_simulated_load_with_the_model():
    from capacity_model import compare

    want = {"cpu_share": 0.25, "redis_cmds_per_s": 1000, "base_kb": 100_000, "rss_kb": 120_000}
    run = {"cpu_share": [0.22, 0.29], "redis_cmds_per_s": 1100, "rss_kb": [118_000, 123_000]}
    assert compare(want, run, 0.25)
    assert not compare(want, {**run, "cpu_share": [0.22, 0.33]}, 0.25)  # one process above
    assert compare(want, {**run, "cpu_share": [0.12, 0.12]}, 0.25)  # below: the safe side
    assert not compare(want, {**run, "redis_cmds_per_s": 1400}, 0.25)
    # memory is judged above the empty process: 110 MB is half the sessions' 20 MB
    assert not compare(want, {**run, "rss_kb": [110_000, 120_000]}, 0.25)


def test_an_idle_session_cost_lowers_both_limits():
    c = capacity(**{**BASE, "cpu_us_per_session_s": 50, "redis_cmds_per_session_s": 0.2})
    assert c.sessions_by_cpu == 5000  # 0.5 s / (500 us x 0.1 + 50 us) per session-second
    # 5,000 sessions: 500 pushes/s x 2 + 5,000 x 0.2 = 2,000 commands/s (50 processes);
    # 250,000 bytes/s (40 processes)
    assert c.processes_per_redis == 40


def test_several_redis_servers_serve_as_many_more_processes_as_the_busiest_allows():
    one = capacity(**BASE)
    # two shards, the main one taking 60% (its half of the sessions and what is global)
    two = capacity(**{**BASE, "busiest_share": 0.6})
    assert two.processes_per_redis == int(one.processes_per_redis / 0.6) == 33
    assert two.sessions_per_process == one.sessions_per_process


def test_compare_checks_each_redis_server_when_there_are_several():
    from capacity_model import compare

    want = {"cpu_share": 0.25, "redis_cmds_per_s": 1000, "base_kb": 100_000, "rss_kb": 120_000,
            "redis_cmds_per_server_s": [600, 400]}
    run = {"cpu_share": [0.22], "redis_cmds_per_s": 1000, "rss_kb": [120_000],
           "redis_cmds_per_server_s": [620, 380]}
    assert compare(want, run, 0.25)
    assert not compare(want, {**run, "redis_cmds_per_server_s": [900, 100]}, 0.25)
