"""What C malloc as Python's allocator costs per push, in instructions. Not a test.

    python bench/bench_allocator.py [--pushes 1500]

``manage.py a2ui_serve`` runs Python on C ``malloc`` (``--allocator``, docs/operations.md) so
that memory freed after a burst goes back to the system. What that costs in CPU is hard to see
in wall-clock benches on a shared machine (the soak's server CPU moved by 40% between runs of
the same code), so this counts instructions instead: ``valgrind --tool=callgrind`` runs the same
in-process workload (an agent socket and a person's socket over channels' test communicator,
SQLite and the in-memory layer; the soak's mix of ``ui.render``, ``ui.update``,
``ui.progress`` and ``ui.notify``, each awaited at the person's socket) under each allocator,
once with ``--pushes`` pushes and once with none; the difference divided by the pushes is the
count per push. Daphne's framing is not in it (the communicator stands in for the transport).
Prints instructions per push for each allocator and the ratio malloc / pymalloc.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def mix(k, sid):
    """The k-th push of the soak's mix without the request (bench/soak_client.py)."""
    slot = k % 10
    base = {"session_id": sid}
    if slot in (0, 5):
        return "ui.render", {**base, "component_id": "status", "component_type": "card",
                             "data": {"title": "Order status", "description": f"update {k}",
                                      "sections": [{"label": "Step", "value": k}]}}
    if slot in (2, 7):
        return "ui.update", {**base, "component_id": "status", "operation": "merge",
                             "data": {"description": f"step {k} of many"}}
    if slot == 4:
        return "ui.notify", {**base, "level": "info", "title": "Heads up", "message": f"m {k}"}
    return "ui.progress", {**base, "task_id": "job", "progress_type": "determinate",
                           "value": k, "total": 1000, "message": "working"}


async def workload(pushes):
    from channels.db import database_sync_to_async
    from django.contrib.auth import get_user_model

    from a2ui import tokens

    def fixtures():
        user = get_user_model().objects.create(username=f"alloc-{os.getpid()}")
        agent, key = tokens.create_agent(f"alloc-{os.getpid()}", display_name="Bench")
        return key, tokens.issue_stream_token(user, agent).token

    key, token = await database_sync_to_async(fixtures)()
    sys.path.insert(0, str(ROOT))
    from tests.wsutil import connect_agent, connect_user, init_session, recv, send

    agent = await connect_agent(key)
    person = await connect_user(token)
    sid = await init_session(person)
    await recv(agent)  # session.opened
    for k in range(pushes):
        method, params = mix(k, sid)
        await send(agent, {"jsonrpc": "2.0", "id": k, "method": method, "params": params})
        reply = await recv(agent)
        assert reply.get("id") == k and "result" in reply, reply
        await recv(person)
    await person.disconnect()
    await agent.disconnect()


def inner(pushes):
    import django

    django.setup()
    asyncio.run(workload(pushes))


def instructions(allocator, pushes, env):
    """Instructions callgrind counted for one run of the workload."""
    with tempfile.TemporaryDirectory() as out:
        run = subprocess.run(
            ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}/cg.out",
             sys.executable, __file__, "--inner", str(pushes)],
            env={**env, "PYTHONMALLOC": allocator}, cwd=ROOT, capture_output=True, text=True)
    match = re.search(r"Collected : (\d+)", run.stderr)
    if run.returncode != 0 or match is None:
        raise SystemExit(f"{allocator} x {pushes} failed:\n{run.stdout}\n{run.stderr[-3000:]}")
    return int(match.group(1))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pushes", type=int, default=1500)
    parser.add_argument("--inner", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.inner is not None:
        inner(args.inner)
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        env = {k: v for k, v in os.environ.items()
               if k not in ("DATABASE_URL", "REDIS_URL", "PYTHONMALLOC")}
        env.update(DJANGO_SETTINGS_MODULE="a2ui_project.settings", PYTHONPATH=str(ROOT),
                   SQLITE_PATH=f"{tmp}/bench.sqlite3", A2UI_LOG_LEVEL="WARNING",
                   DJANGO_SECRET_KEY="bench-allocator-" + "x" * 40)
        subprocess.run([sys.executable, "manage.py", "migrate", "-v", "0"], env=env, cwd=ROOT,
                       check=True)
        per_push = {}
        for allocator in ("pymalloc", "malloc"):
            full = instructions(allocator, args.pushes, env)
            empty = instructions(allocator, 0, env)
            per_push[allocator] = (full - empty) / args.pushes
            print(f"{allocator:>8}: {full:,} - {empty:,} instructions, "
                  f"{per_push[allocator]:,.0f} per push", flush=True)
    ratio = per_push["malloc"] / per_push["pymalloc"]
    print(json.dumps({"pushes": args.pushes, **{k: round(v) for k, v in per_push.items()},
                      "malloc / pymalloc": round(ratio, 3)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
