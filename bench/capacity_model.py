"""The capacity model of docs/performance.md ("Capacity"): pure arithmetic, no I/O.

From what the benches measure (memory per idle session, CPU per push, Redis commands and bytes
per push) and what an operator chooses (memory and CPU share a process may use, the push rate
per session, what one Redis may take), how many sessions one process holds and how many
processes one Redis serves.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Capacity:
    sessions_by_memory: int
    sessions_by_cpu: int
    sessions_per_process: int
    processes_per_redis: int
    limited_by: str  # "memory" or "cpu"


def capacity(*, kb_per_session, base_mb, memory_mb, cpu_us_per_push, pushes_per_session_s,
             cpu_share=0.7, redis_cmds_per_push, redis_bytes_per_push,
             redis_cmds_per_s=100_000, redis_bytes_per_s=100_000_000,
             cpu_us_per_session_s=0.0, redis_cmds_per_session_s=0.0, busiest_share=1.0):
    """Sessions per process and processes per Redis.

    ``kb_per_session``: RSS per idle session (bench_capacity.py); ``base_mb``: RSS of an empty
    process; ``memory_mb``: memory a process may use. ``cpu_us_per_push``: server CPU per push
    (bench_push.py / bench_gate.py); ``pushes_per_session_s``: pushes a session gets per second;
    ``cpu_share``: the part of one core a process may spend on pushes (headroom for bursts and
    the event loop's latency). ``redis_*_per_push``: Redis commands and input bytes per push
    (bench_capacity.py ``--push``); ``redis_*_per_s``: what one Redis may take.
    ``cpu_us_per_session_s`` and ``redis_cmds_per_session_s``: what an open session costs per
    second with no push (its timers and watches; bench_capacity_sim.py measures them).
    ``busiest_share``: with several Redis servers (``A2UI['REDIS_SHARDS']``), the part of the
    commands and bytes the busiest one takes (the main server: its sessions' share and what is
    not a session's; bench_capacity_sim.py ``--shards`` measures it); ``processes_per_redis``
    is then the processes the servers serve together.
    """
    if min(kb_per_session, cpu_us_per_push, pushes_per_session_s) <= 0:
        raise ValueError("per-session and per-push costs must be positive")
    by_memory = max(0, int((memory_mb - base_mb) * 1024 // kb_per_session))
    by_cpu = int(cpu_share * 1_000_000
                 // (cpu_us_per_push * pushes_per_session_s + cpu_us_per_session_s))
    per_process = min(by_memory, by_cpu)
    pushes_per_process = per_process * pushes_per_session_s
    limits = []
    if redis_cmds_per_push > 0:
        limits.append(redis_cmds_per_s / ((redis_cmds_per_push * pushes_per_process
                                           + redis_cmds_per_session_s * per_process)
                                          * busiest_share or 1))
    if redis_bytes_per_push > 0:
        limits.append(redis_bytes_per_s / (redis_bytes_per_push * pushes_per_process
                                           * busiest_share or 1))
    per_redis = int(min(limits)) if limits else 0
    return Capacity(by_memory, by_cpu, per_process, per_redis,
                    "memory" if by_memory <= by_cpu else "cpu")


def within(measured, predicted, tolerance):
    """``measured`` is within ``tolerance`` (a fraction) of ``predicted``."""
    return abs(measured - predicted) <= tolerance * abs(predicted)


def compare(want, run, tolerance):
    """Whether a simulated load matched the model: no process's CPU share above the prediction
    by more than ``tolerance`` (below it is the safe side: CPU per push falls as the rate rises,
    so the model, calibrated at a lower rate, errs that way), Redis commands per second and
    every process's memory above its empty RSS (``want["base_kb"]``) within ``tolerance`` of
    the prediction, and so each Redis server's commands per second when there are several
    (``redis_cmds_per_server_s``). ``run`` lists CPU shares and RSS per process."""
    base = want["base_kb"]
    return (all(c <= want["cpu_share"] * (1 + tolerance) for c in run["cpu_share"])
            and within(run["redis_cmds_per_s"], want["redis_cmds_per_s"], tolerance)
            and all(within(got, wanted, tolerance) for got, wanted in zip(
                run.get("redis_cmds_per_server_s", ()), want.get("redis_cmds_per_server_s", ()),
                strict=False))
            and all(within(kb - base, want["rss_kb"] - base, tolerance) for kb in run["rss_kb"]))
