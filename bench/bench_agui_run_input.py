"""The server's cost of one AG-UI 1.0 run whose body carries many new user messages.

    python bench/bench_agui_run_input.py [--database-url postgres://...] [--messages 1000]
                                         [--trials 5]

Each trial: a first run opens a new thread's session (one message), then a second run of the
thread sends ``--messages`` user messages (the issue's 147 KB body for 1,000). Reported per
trial: the time ``POST /api/v4/agui/run`` took until the response (everything before the
stream: the checks, the transcript, the audit entry), the session events the run fanned out
to the session's other clients (``a2ui.push.fanout.send`` calls) and the transcript entries
it stored. In process (Django's AsyncClient), on PostgreSQL, with the channel layer the
settings name (in-memory without REDIS_URL). Not a test.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def body(thread, run, n):
    return json.dumps({"threadId": thread, "runId": run, "state": {}, "tools": [],
                       "context": [], "messages": [
                           {"id": f"m-{run}-{i}", "role": "user",
                            "content": f"message number {i} of the history " + "x" * 90}
                           for i in range(n)]})


async def first_chunk(response):
    stream = response.streaming_content.__aiter__()
    try:
        return await stream.__anext__()
    finally:
        await stream.aclose()


async def end_runs(thread):
    from asgiref.sync import sync_to_async

    from a2ui.models import AgentRun

    await sync_to_async(lambda: AgentRun.objects.filter(thread_id=thread).update(
        status=AgentRun.Status.CANCELLED))()


async def trial(client, auth, n):
    from asgiref.sync import sync_to_async

    from a2ui.models import SessionActivity
    from a2ui.push import fanout as stream

    thread = uuid.uuid4().hex
    response = await client.post("/api/v4/agui/run", body(thread, "r0", 1),
                                 content_type="application/json", headers=auth)
    assert response.status_code == 200, response.content
    await first_chunk(response)
    await end_runs(thread)  # the client went away: as its stream would, once it notices
    sent = 0
    real = stream.send

    async def counting(*args, **kwargs):
        nonlocal sent
        sent += 1
        return await real(*args, **kwargs)

    data = body(thread, "r1", n)
    stream.send = counting
    try:
        t0 = time.perf_counter()
        response = await client.post("/api/v4/agui/run", data, content_type="application/json",
                                     headers=auth)
        elapsed = time.perf_counter() - t0
    finally:
        stream.send = real
    assert response.status_code == 200, response.content
    await first_chunk(response)
    await end_runs(thread)
    entries = await sync_to_async(lambda: len(
        SessionActivity.objects.filter(session__client_info__agui_thread_id=thread)
        .values_list("transcript", flat=True).first() or []))()
    return len(data), elapsed, sent, entries


async def run(args):
    from asgiref.sync import sync_to_async
    from django.contrib.auth import get_user_model
    from django.test import AsyncClient

    from a2ui import tokens
    from a2ui.models import Agent

    def fixtures():
        user, _ = get_user_model().objects.get_or_create(username="bench-agui-input")
        Agent.objects.filter(name="bench-agui-input").delete()
        agent, _ = tokens.create_agent("bench-agui-input", display_name="Bench")
        agent.max_concurrent_sessions = 1_000_000
        agent.save()
        return tokens.issue_stream_token(user, agent, "stream_agui").token

    token = await sync_to_async(fixtures)()
    client = AsyncClient()
    auth = {"Authorization": f"Bearer {token}"}
    rows = [await trial(client, auth, args.messages) for _ in range(args.trials)]
    for size, elapsed, sent, entries in rows:
        print(f"body {size:>7} B  server {elapsed * 1000:8.1f} ms  events fanned out {sent:>5}"
              f"  transcript entries {entries:>5}")
    print(f"median server time {statistics.median(r[1] for r in rows) * 1000:.1f} ms "
          f"over {args.trials} trials of {args.messages} messages")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--database-url",
                        default="postgres://postgres@127.0.0.1:5432/a2ui_bench")
    parser.add_argument("--messages", type=int, default=1000)
    parser.add_argument("--trials", type=int, default=5)
    args = parser.parse_args()
    os.environ["DATABASE_URL"] = args.database_url
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "a2ui_project.settings")
    os.environ.setdefault("DJANGO_SECRET_KEY", "bench-agui-input-" + uuid.uuid4().hex)
    os.environ.setdefault("DJANGO_ALLOWED_HOSTS", "testserver")
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from bench_push import prepare_database

    prepare_database(args.database_url, dict(os.environ))
    import django

    django.setup()
    asyncio.run(run(args))


if __name__ == "__main__":
    main()
