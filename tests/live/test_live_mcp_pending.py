"""Tier 2: an MCP-only agent killed with SIGKILL while it waits gets the person's answer when it
comes back (issue 23, item 4).

The agent's MCP client runs in a subprocess (the official SDK's client, on both revisions: the
handshake era's ``ClientSession`` and 2026-07-28's ``Client``) and calls ``request_input`` on
one Daphne process; it is killed with SIGKILL while the call waits. The person answers on their
socket and is told "ok". A new MCP client on another Daphne process gets the answer through
``pending_requests`` (once) and through ``request_input`` again with the same ``request_id``;
the person is asked once.
"""

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import pytest
from channels.db import database_sync_to_async

from a2ui import tokens
from tests.live.client import init_session, open_user
from tests.live.mcpclient import mcp_client, mcp_session, result_json

pytestmark = pytest.mark.django_db(transaction=True)
ROOT = Path(__file__).resolve().parents[2]

#: The agent process: connects, asks, waits (until it is killed).
AGENT = """
import asyncio, json, sys
from types import SimpleNamespace
from tests.live.mcpclient import mcp_client, mcp_session

url, key, era, arguments = sys.argv[1], sys.argv[2], sys.argv[3], json.loads(sys.argv[4])

async def main():
    server = SimpleNamespace(url=url)
    opened = mcp_session(server, key) if era == "2025" else mcp_client(server, key)
    async with opened as mcp:
        print("asking", flush=True)
        await mcp.call_tool("request_input", arguments)

asyncio.run(main())
"""


@pytest.mark.parametrize("era", ["2025", "2026"])
async def test_an_mcp_agent_killed_while_it_waits_gets_the_answer_back(
        daphne_server, user, agent, agent_key, era):
    a, b = daphne_server(), daphne_server()
    token = await database_sync_to_async(lambda: tokens.issue_stream_token(user, agent).token)()
    person = await open_user(a, token)
    sid = await init_session(person)
    ask = {"session_id": sid, "input_type": "text", "prompt": "Your name?",
           "request_id": "ask-name", "timeout_seconds": 300}
    proc = subprocess.Popen([sys.executable, "-c", AGENT, a.url, agent_key, era,
                             json.dumps(ask)], cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        shown = await person.recv_until(lambda m: m.get("method") == "ui.request_input",
                                        timeout=30)
        assert shown["params"]["request_id"] == "ask-name"
        await asyncio.sleep(0.5)  # the call waits
        proc.kill()  # SIGKILL: no cancel, no DELETE, no goodbye
        await asyncio.to_thread(proc.wait, 10)
    finally:
        if proc.poll() is None:
            proc.kill()
    await asyncio.sleep(1.0)  # the server sees the stream close
    await person.send({"jsonrpc": "2.0", "id": "ans", "method": "user.respond",
                       "params": {"request_id": "ask-name", "value": "Ada"}})
    reply = await person.recv_until(lambda m: m.get("id") == "ans")
    assert reply["result"] == {"ok": True}, (reply, a.log())
    await asyncio.sleep(0.5)

    # The agent comes back, on the other process, on the same revision.
    back = mcp_session(b, agent_key) if era == "2025" else mcp_client(b, agent_key)
    async with back as mcp:
        listed = result_json(await mcp.call_tool("pending_requests", {"session_id": sid}))
        assert [(i["request_id"], i["status"], i.get("answer")) for i in listed["requests"]] \
            == [("ask-name", "answered", "Ada")], (listed, a.log())
        again = result_json(await mcp.call_tool("pending_requests", {}))
        assert again == {"requests": []}  # handed over once
        for _ in range(2):  # a retry returns the stored answer, as often as it is made
            out = await asyncio.wait_for(mcp.call_tool("request_input", ask), 20)
            assert not out.is_error
            assert result_json(out) == {"request_id": "ask-name", "status": "answered",
                                        "value": "Ada"}
    with pytest.raises(TimeoutError):  # the person was asked once
        await person.recv_until(lambda m: m.get("method") == "ui.request_input", timeout=0.5)
    await person.close()
