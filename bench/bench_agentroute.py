"""The cost of routing a session event to one agent socket (a2ui.sessions.agentroute). Not a test.

    REDIS_URL=redis://127.0.0.1:6379/7 python bench/bench_agentroute.py [--sockets 300] [--events 300]

One process, real Redis: ``--sockets`` agent sockets of one agent (as in bench/bench_soak.py)
and ``--events`` new sessions: how long deciding which socket gets each ``session.opened``
takes. The ways, in the same run (the channel layer's delivery to every socket, which the
relay also saves, is not in these figures):

* ``relay``: what a process does now: its relay of the agent's group routes the event once
  (one Redis command) and hands it to the one socket holding the session;
* ``per-socket``: every socket runs the take script itself (one Redis command per socket);
* ``routed``: ``agentroute.atake`` in every socket (one command per process, the other sockets
  await it): what every socket did before the relay, on top of being woken by the layer;
* ``all (no Redis)``: observer sockets (``?events=all``), the gather alone;
* ``redis GET``: one plain round trip per event.

Prints the time per event's fan-out (median, p90) and the ratios routed / per-socket and
relay / routed. Checks that exactly one socket takes each session.
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


def event(sid):
    return {"method": "session.opened", "params": {"session_id": sid}}


async def main(args):
    import django

    django.setup()
    from a2ui.infra import shared
    from a2ui.sessions import agentroute

    redis = shared.backend()
    if not hasattr(redis, "execute"):
        raise SystemExit("set REDIS_URL: this measures the Redis path")
    channels = [f"specific.bench!{uuid.uuid4().hex}" for _ in range(args.sockets)]
    for channel in channels:
        await agentroute.ajoin(channel, agentroute.ONE)

    async def per_socket(sid):
        async def one(channel):
            holder, = await redis.execute(("EVAL", agentroute.TAKE_SCRIPT, 1,
                                           agentroute.holder_key(sid.replace("-", "")), channel,
                                           agentroute.live_key(""), 60))
            return holder == channel
        return await asyncio.gather(*(one(c) for c in channels))

    async def routed(sid):
        return await asyncio.gather(*(agentroute.atake(c, agentroute.ONE, event(sid))
                                      for c in channels))

    async def observers(sid):
        return await asyncio.gather(*(agentroute.atake(c, agentroute.ALL, event(sid))
                                      for c in channels))

    relay = agentroute._Relay("a2ui.a.bench")  # its receive loop is not started: route() alone
    delivered = []

    async def deliver(event):
        delivered.append(event)

    for channel in channels:
        relay.members[channel] = (agentroute.ONE, deliver)

    async def relayed(sid):
        delivered.clear()
        await relay.route({"type": agentroute.EVENT_TYPE, **event(sid)})
        return [True] * len(delivered)

    async def floor(sid):
        return [await redis.execute(("GET", f"a2ui:bench:{sid}"))]

    results = {}
    ways = (("relay", relayed), ("routed", routed), ("per-socket", per_socket),
            ("all (no Redis)", observers), ("redis GET", floor))
    for name, fan_out in ways * args.repeat:
        times = []
        for _ in range(args.events):
            sid = str(uuid.uuid4())
            start = time.perf_counter()
            taken = await fan_out(sid)
            times.append((time.perf_counter() - start) * 1000)
            if name in ("relay", "routed", "per-socket"):
                assert sum(bool(t) for t in taken) == 1, (name, sum(taken))
        times.sort()
        results[name] = (statistics.median(times), times[int(len(times) * 0.9)])
        print(f"{name:>14}: median {results[name][0]:.3f} ms, p90 {results[name][1]:.3f} ms "
              f"per event to {args.sockets} sockets")
    for channel in channels:
        await agentroute.aleave(channel)
    ratio = results["routed"][0] / results["per-socket"][0]
    print(f"routed / per-socket (median): {ratio:.3f}")
    print(f"relay / routed (median): {results['relay'][0] / results['routed'][0]:.3f}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--sockets", type=int, default=300)
    parser.add_argument("--events", type=int, default=300)
    parser.add_argument("--repeat", type=int, default=2, help="rounds of the four ways")
    asyncio.run(main(parser.parse_args()))
