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
