"""Tier 2: session limits a person cannot use up by using the product, across two processes.

Only sessions in use count against the agent's limit (10) and a person's share of it (5); a
person's finished AG-UI 1.0 threads take no place. A person opens fifteen threads on two
servers and keeps working; while one person floods both servers, exactly their share is
admitted, another person still opens sessions, and at the agent's limit a third person is
refused with ``per: agent`` (-32007 on the socket, 429 on the run view).
"""

import asyncio

import pytest
from channels.db import database_sync_to_async
from django.contrib.auth import get_user_model

from a2ui.models import A2UISessionLog
from tests.live.aguihttp import post_run, run_input
from tests.live.client import init, open_agent, open_user
from tests.live.test_live_mcp import issue

pytestmark = pytest.mark.django_db(transaction=True)
AGUI = "stream_agui"


async def test_a_person_opens_fifteen_threads_on_two_servers(two_servers, user, agent,
                                                             agent_key):
    a, b = two_servers
    bot = await open_agent(a, agent_key)
    token = await issue(user, agent, AGUI)
    sids = set()
    for n in range(15):
        body = run_input(thread_id=f"thread-{n}", run_id=f"r{n}")
        stream = await post_run((a, b)[n % 2].url, body, token)
        assert stream.status == 200, (n, getattr(stream, "json", None))
        assert (await stream.next())["type"] == "RUN_STARTED"
        notice = await bot.recv_until(lambda m, r=body["runId"]: m.get("method") ==
                                      "agui.run_started" and m["params"]["run_id"] == r)
        sid = notice["params"]["session_id"]
        sids.add(sid)
        done = await bot.call("agui.run_finish", {"session_id": sid, "run_id": body["runId"]},
                              100 + n)
        assert done["result"]["ended"] is True, done
        events = await stream.rest()
        assert events[-1]["type"] == "RUN_FINISHED"
        await stream.close()
    assert len(sids) == 15
    rejected = await database_sync_to_async(
        lambda: A2UISessionLog.objects.filter(state="rejected").count())()
    assert rejected == 0


async def test_one_person_floods_another_still_opens(two_servers, user, other_user, agent):
    a, b = two_servers
    servers = (a, b)

    async def tabs(person, count):
        sockets = [await open_user(servers[n % 2], await issue(person, agent))
                   for n in range(count)]
        replies = await asyncio.gather(*(init(s, rpc_id=f"t{n}")
                                         for n, s in enumerate(sockets)))
        return sockets, replies

    # Seven tabs at once on two processes: the agent row lock admits exactly the share, 5.
    _, flood = await tabs(user, 7)
    admitted = [r for r in flood if "result" in r]
    refused = [r for r in flood if "error" in r]
    assert len(admitted) == 5 and len(refused) == 2, flood
    assert all(r["error"]["code"] == -32007 for r in refused)
    assert all(r["error"]["data"] == {"limit": 5, "per": "person"} for r in refused)
    run = await post_run(b.url, run_input(), await issue(user, agent, AGUI))
    assert run.status == 429 and run.json["error"]["per"] == "person", run.json

    _, theirs = await tabs(other_user, 5)  # another person: their own share
    assert all("result" in r for r in theirs), theirs

    carol = await database_sync_to_async(
        lambda: get_user_model().objects.create_user("carol", password="pw-carol"))()
    _, full = await tabs(carol, 1)
    assert full[0]["error"]["data"] == {"limit": 10, "per": "agent"}, full
    run = await post_run(a.url, run_input(), await issue(carol, agent, AGUI))
    assert run.status == 429 and run.json["error"]["per"] == "agent", run.json
