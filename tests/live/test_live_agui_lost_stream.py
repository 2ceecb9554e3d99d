"""Tier 2: kill -9 the process serving AG-UI 1.0 runs (issue 23, item 8). Two Daphne
processes with PostgreSQL and Redis: the agent's socket on A, two runs of two threads streamed
by B, then B is killed. A new run of the first thread is accepted on A within a few seconds
(the dead stream's lease lapses: AGUI_RUN_LEASE_SECONDS), the agent hears ``agui.run_ended``
(``cancelled``, ``reason: "stream_lost"``) for both runs (the first from the new run, the
second from A's housekeeping sweep, with no new run), and finishing a dead run does not claim
the client received RUN_FINISHED."""

import asyncio
import time

import pytest

from a2ui.models import AgentRun
from tests.live.aguihttp import post_run, run_input
from tests.live.client import open_agent
from tests.live.test_live_mcp import issue

pytestmark = pytest.mark.django_db(transaction=True)
AGUI = "stream_agui"
LEASE = 6  # AGUI_RUN_LEASE_SECONDS' default
SWEEP = 15  # housekeeping.INTERVAL_SECONDS


async def started(bot, run_id):
    return (await bot.recv_until(lambda m: m.get("method") == "agui.run_started"
                                 and m["params"]["run_id"] == run_id, limit=10**6))["params"]


async def call(bot, method, params, rpc_id):
    """``bot.call`` that waits past any number of notifications (other agents' events may
    share the channel layer's PUBLISH channels on a shared Redis server)."""
    await bot.send({"jsonrpc": "2.0", "id": rpc_id, "method": method, "params": params})
    return await bot.recv_until(lambda m: m.get("id") == rpc_id and "method" not in m,
                                limit=10**6)


async def test_a_killed_process_does_not_hold_its_threads_and_the_agent_is_told(
        two_servers, user, agent, agent_key):
    a, b = two_servers
    bot = await open_agent(a, agent_key)
    token = await issue(user, agent, AGUI)
    first, second = run_input(text="one"), run_input(text="two")
    streams = []
    for body in (first, second):
        stream = await post_run(b.url, body, token)
        assert stream.status == 200, getattr(stream, "json", None)
        assert (await stream.next())["type"] == "RUN_STARTED"
        streams.append(stream)
    sid = (await started(bot, first["runId"]))["session_id"]
    other_sid = (await started(bot, second["runId"]))["session_id"]
    await asyncio.sleep(LEASE / 2 + 1)  # B has refreshed the leases at least once

    b.kill()
    killed = time.monotonic()
    for stream in streams:
        await stream.close()

    # A new run of the first thread, on A: accepted once the dead stream's lease lapsed (it
    # was 409 for about 50 s, until the row had not beaten for three keepalives).
    third = run_input(thread_id=first["threadId"], text="three")
    while True:
        stream = await post_run(a.url, third, token)
        if stream.status != 409:
            break
        assert time.monotonic() - killed < LEASE + 6, "the thread is still held"
        await asyncio.sleep(0.5)
    accepted = time.monotonic() - killed
    assert stream.status == 200, getattr(stream, "json", None)
    assert (await stream.next())["type"] == "RUN_STARTED"
    assert accepted < LEASE + 6

    # The agent hears both runs ended, the second one from the sweep (no run asked for it).
    ended, runs = {}, (first["runId"], second["runId"])
    deadline = LEASE + SWEEP + 10
    while len(ended) < 2:
        message = await bot.recv_until(lambda m: m.get("method") == "agui.run_ended"
                                       and m["params"]["run_id"] in runs,
                                       timeout=max(1, deadline - (time.monotonic() - killed)),
                                       limit=10**6)
        ended[message["params"]["run_id"]] = message["params"]
    for body, session in ((first, sid), (second, other_sid)):
        params = ended[body["runId"]]
        assert params["session_id"] == session and params["status"] == "cancelled", params
        assert params["reason"] == "stream_lost" and "did not receive" in params["message"]
    assert await _status(sid, first["runId"]) == AgentRun.Status.CANCELLED

    # Finishing a dead run does not claim delivery; the live run's end is delivered.
    late = await call(bot, "agui.run_finish", {"session_id": other_sid,
                                              "run_id": second["runId"]}, "finish-dead")
    assert late["error"]["code"] == -32602, late
    assert late["error"]["data"]["stream_lost"] is True
    assert "did not receive" in late["error"]["message"]
    done = await call(bot, "agui.run_finish", {"session_id": sid, "run_id": third["runId"],
                                              "result": "ok"}, "finish-third")
    assert done["result"]["ended"] is True and done["result"]["delivered"] is True, done
    events = await stream.rest()
    assert events[-1]["type"] == "RUN_FINISHED" and events[-1]["result"] == "ok"
    await stream.close()
    await bot.close()


async def _status(sid, run_id):
    from channels.db import database_sync_to_async

    return await database_sync_to_async(
        AgentRun.objects.filter(session_id=sid, run_id=run_id).values_list(
            "status", flat=True).get)()
