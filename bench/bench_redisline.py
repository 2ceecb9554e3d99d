"""The hot-path Redis client (a2ui.infra.redisline) against redis-py with hiredis, same run.

    python bench/bench_redisline.py [--url redis://127.0.0.1:6379/3] [--batches 20000]
                                    [--concurrency 1,50] [--reps 5]

The per-message path sends small pipelines: a push's (HINCRBY + HMGET + EXPIRE), and the same
with the live-session GET before it. Both clients run the same batches on one event loop, in
turn, ``--reps`` times (order alternated); with ``--concurrency`` tasks in flight at once (1: one
batch waits for the other; 50: what a busy process has in flight). Reported per scenario: the
CPU time of this process per batch (``time.process_time``: the client's own cost, Redis's
excluded), batches per second, and the ratio redis-py / redisline (above 1: redisline is
cheaper). redis-py: ``redis.asyncio`` with a pool as ``a2ui.infra.redisstate`` builds it
(``pipeline(transaction=False)``; hiredis is its parser when installed). The decision rule
(docs/performance.md): keep redisline only while it is at least 20% cheaper.
"""

import argparse
import asyncio
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from a2ui.infra import redisline, redisurl

KEY = "a2ui:ss:bench"


def batches(live):
    commands = [("HINCRBY", KEY, "n", 1), ("HMGET", KEY, "e", "s", "f"), ("EXPIRE", KEY, 604800)]
    return ([("GET", "a2ui:live:bench")] + commands) if live else commands


async def run_line(line, commands, count, concurrency):
    async def worker(n):
        for _ in range(n):
            await line.execute(*commands)
    await asyncio.gather(*[worker(count // concurrency) for _ in range(concurrency)])


async def run_redispy(client, commands, count, concurrency):
    async def worker(n):
        for _ in range(n):
            async with client.pipeline(transaction=False) as pipe:
                for command in commands:
                    pipe.execute_command(*command)
                await pipe.execute()
    await asyncio.gather(*[worker(count // concurrency) for _ in range(concurrency)])


async def measure(run, *args):
    cpu, wall = time.process_time(), time.perf_counter()
    await run(*args)
    return time.process_time() - cpu, time.perf_counter() - wall


async def main(args):
    import redis
    import redis.asyncio as aioredis

    print(f"hiredis in redis-py: {redis.utils.HIREDIS_AVAILABLE}; url {redisurl.redact(args.url)}")
    line = redisline.Line(args.url)
    client = aioredis.Redis.from_pool(redisurl.async_pool(
        args.url, decode_responses=True, blocking_max_connections=50, timeout=15,
        socket_timeout=15))
    await line.execute(("PING",))
    await client.ping()
    print(f"{'scenario':<28} {'redisline us/batch':>19} {'redis-py us/batch':>18} "
          f"{'ratio':>6} {'line batch/s':>13} {'py batch/s':>11}")
    for live in (False, True):
        for concurrency in [int(c) for c in args.concurrency.split(",")]:
            commands = batches(live)
            results = {"line": [], "py": []}
            for rep in range(args.reps):
                order = [("line", run_line, line), ("py", run_redispy, client)]
                if rep % 2:
                    order.reverse()
                for name, run, target in order:
                    results[name].append(await measure(run, target, commands, args.batches,
                                                       concurrency))
            n = args.batches // concurrency * concurrency
            cpu_line = statistics.median(c for c, _ in results["line"]) / n * 1e6
            cpu_py = statistics.median(c for c, _ in results["py"]) / n * 1e6
            rate_line = n / statistics.median(w for _, w in results["line"])
            rate_py = n / statistics.median(w for _, w in results["py"])
            scenario = f"{len(commands)} cmds, {concurrency} in flight"
            print(f"{scenario:<28} {cpu_line:>19.1f} {cpu_py:>18.1f} {cpu_py / cpu_line:>6.2f} "
                  f"{rate_line:>13.0f} {rate_py:>11.0f}")
    line.close()
    await client.aclose()
    redis.Redis.from_url(args.url).delete(KEY)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", default=os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0"))
    parser.add_argument("--batches", type=int, default=20000)
    parser.add_argument("--concurrency", default="1,50")
    parser.add_argument("--reps", type=int, default=5)
    asyncio.run(main(parser.parse_args()))
