"""The cost of agent presence in Redis (a2ui.sessions.presence). Not a test.

    REDIS_URL=redis://127.0.0.1:6379/7 python bench/bench_presence.py [--members 1000] [--agents 100]

One process, real Redis: ``--members`` agent sockets spread over ``--agents`` agents. Measured
in the same run, each against one plain ``GET`` round trip (the baseline):

* ``join`` / ``leave``: what an agent socket's connect and close add (one script each);
* ``status``: what a person's ``a2ui.init`` adds (one script);
* ``heartbeat``: one process's periodic refresh of all its members and the sweep (one round
  trip, ``--members`` scripts), with nothing lapsed;
* ``sweep lapsed``: the sweep removing ``--members`` lapsed members (``SWEEP_LIMIT`` a call).

Prints the median time of each and its ratio to ``GET``.
"""

import argparse
import asyncio
import os
import statistics
import sys
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "a2ui_project.settings")


async def timed(coro_factory, n):
    out = []
    for _ in range(n):
        start = time.perf_counter()
        await coro_factory()
        out.append(time.perf_counter() - start)
    return statistics.median(out)


async def main(args):
    import django

    django.setup()
    from a2ui.infra import shared
    from a2ui.sessions import presence

    redis = shared.backend()
    if not hasattr(redis, "execute"):
        raise SystemExit("set REDIS_URL: this measures the Redis path")
    presence._publish = _no_publish  # the channel layer's group send is not measured here
    run = uuid.uuid4().hex[:8]
    agents = [f"bench-{run}-{i}" for i in range(args.agents)]
    members = [(agents[i % len(agents)], f"specific.bench!{run}{i}") for i in range(args.members)]
    for agent_id, member in members:
        await presence.ajoin(agent_id, member)
    for task in list(presence._tasks.values()):
        task.cancel()  # the bench calls the sweep itself

    n = args.repeat
    get = await timed(lambda: redis.execute(("GET", "a2ui:bench:none")), n)
    extra = [("extra", f"specific.bench!{run}x{i}") for i in range(n)]
    it = iter(extra)
    join = await timed(lambda: presence.ajoin(*next(it)), n)
    it = iter(extra)
    leave = await timed(lambda: presence.aleave(next(it)[1]), n)
    status = await timed(lambda: presence.astatus(agents[0]), n)
    heartbeat = await timed(presence.asweep, max(3, n // 20))
    # Every member lapses: the process "dies" (its members no longer refreshed).
    presence._mine.clear()
    await redis.execute(*[("ZADD", presence.INDEX_KEY, 1, f"{a} {m}") for a, m in members],
                        *[("ZADD", presence.agent_key(a), 1, m) for a, m in members])
    start = time.perf_counter()
    swept = 0
    while True:
        gone, = await redis.execute(("EVAL", presence.SWEEP_SCRIPT, 1, presence.INDEX_KEY,
                                     presence.agent_key(""), presence.SWEEP_LIMIT))
        swept += len(gone)
        left, = await redis.execute(("ZCOUNT", presence.INDEX_KEY, "-inf", 1))
        if not left:
            break
    lapsed = time.perf_counter() - start
    assert swept == len(agents), (swept, len(agents))
    print(f"members {args.members} over {args.agents} agents; medians of {n}")
    print(f"GET (baseline)  {get * 1e6:9.0f} us")
    for name, value in [("join", join), ("leave", leave), ("status", status),
                        ("heartbeat", heartbeat)]:
        print(f"{name:15} {value * 1e6:9.0f} us  x{value / get:6.1f} GET")
    print(f"sweep lapsed    {lapsed * 1e6:9.0f} us  x{lapsed / get:6.1f} GET "
          f"({args.members} members, {swept} agents told offline)")


async def _no_publish(agent_id, status):
    pass


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--members", type=int, default=1000)
    parser.add_argument("--agents", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=200)
    asyncio.run(main(parser.parse_args()))
