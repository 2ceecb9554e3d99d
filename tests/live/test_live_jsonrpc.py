"""Tier 2: the seed-000 JSON-RPC protocol against live Daphne processes, PostgreSQL and Redis.

Every test talks to ``manage.py a2ui_serve`` (Daphne) subprocesses over real sockets; most use two of them
(the agent socket on one, the user socket on the other) so that everything a second process
needs must travel through Redis and PostgreSQL.
"""

import asyncio
import json
import time
from pathlib import Path

import pytest
from channels.db import database_sync_to_async

from a2ui import tokens
from tests.live.client import Client, ahttp, init, init_session, open_agent, open_user

pytestmark = pytest.mark.django_db(transaction=True)

SEED = json.loads(
    (Path(__file__).resolve().parents[1] / "protocol" / "seed000_examples.json").read_text()
)["section10"]
RENDER_METADATA_DEFAULTS = {"priority": "normal", "position": "main"}


def rpc(method, params, rpc_id=None):
    msg = {"jsonrpc": "2.0", "method": method, "params": params}
    if rpc_id is not None:
        msg["id"] = rpc_id
    return msg


def new_token(user, agent):
    return database_sync_to_async(lambda: tokens.issue_stream_token(user, agent).token)()


def is_reply(rpc_id):
    return lambda m: m.get("id") == rpc_id and "method" not in m


def is_method(method):
    return lambda m: m.get("method") == method


def as_seed_push(msg):
    """A push as the user received it, minus the metadata defaults the server fills in."""
    msg = json.loads(json.dumps(msg))
    if msg.get("method") == "ui.render" and msg["params"].get("metadata") == (
        RENDER_METADATA_DEFAULTS
    ):
        del msg["params"]["metadata"]
    return msg


# Seed section 10 -------------------------------------------------------------------------------


async def test_seed_section_10_exchange_verbatim(daphne_server, stream_token, agent_key):
    server = daphne_server()
    agent = await open_agent(server, agent_key)
    user = await open_user(server, stream_token)

    await user.send_text(SEED[0])  # 1. client -> server: initialize
    reply = await user.recv()
    expected = json.loads(SEED[1])
    assert reply["jsonrpc"] == "2.0" and reply["id"] == expected["id"] == "1"
    caps = reply["result"]["server_capabilities"]
    assert caps.items() >= expected["result"]["server_capabilities"].items()
    sid = reply["result"]["session_id"]
    opened = await agent.recv_until(is_method("session.opened"))
    assert opened["params"]["session_id"] == sid

    async def push_and_check(frame, rpc_id=None):
        seed = json.loads(frame)
        await agent.send(rpc(seed["method"], {"session_id": sid, **seed["params"]}, rpc_id))
        got = await user.recv()
        assert as_seed_push(got) == seed, got

    await push_and_check(SEED[2])  # 3. render a card
    await push_and_check(SEED[3], rpc_id="ask")  # 4. request input; the agent awaits the answer
    await user.send_text(SEED[4])  # 5. the user responds (a notification: no reply)
    answer = await agent.recv_until(is_reply("ask"))
    assert answer == {"jsonrpc": "2.0", "id": "ask", "result": "machine learning datasets"}
    closed = await user.recv()
    assert closed["method"] == "a2ui.request_closed"
    assert closed["params"] == {"request_id": "r1", "status": "answered"}
    for frame in SEED[5:]:  # 6. progress, 7. render results, 8. notify completion
        await push_and_check(frame)
    # The notification user.respond got no response: nothing else is waiting for the user.
    with pytest.raises(TimeoutError):
        await user.recv(timeout=0.5)
    await user.close()
    await agent.close()


# Pending requests across processes -------------------------------------------------------------


async def test_request_input_answered_across_processes(two_servers, stream_token, agent_key):
    a, b = two_servers
    user = await open_user(a, stream_token)
    sid = await init_session(user)
    agent = await open_agent(b, agent_key)
    await agent.send(rpc("ui.request_input", {
        "session_id": sid, "request_id": "price", "input_type": "select",
        "prompt": "What is the target price?", "options": ["$10", "$20", "$50"],
    }, rpc_id=41))
    ask = await user.recv_until(is_method("ui.request_input"))
    assert ask["params"]["request_id"] == "price" and ask["params"]["options"][1] == "$20"
    await user.send(rpc("user.respond", {"request_id": "price", "value": "$20"}, rpc_id="r"))
    assert (await user.recv_until(is_reply("r")))["result"] == {"ok": True}
    answer = await agent.recv_until(is_reply(41))
    assert answer["result"] == "$20"
    # A second answer to the same request is refused, whichever process hears it.
    await user.send(rpc("user.respond", {"request_id": "price", "value": "$50"}, rpc_id="r2"))
    assert (await user.recv_until(is_reply("r2")))["error"]["code"] == -32602


async def test_confirm_times_out_across_processes(two_servers, stream_token, agent_key):
    a, b = two_servers
    user = await open_user(a, stream_token)
    sid = await init_session(user)
    agent = await open_agent(b, agent_key)
    await agent.send(rpc("ui.confirm", {
        "session_id": sid, "request_id": "buy", "title": "Confirm Purchase",
        "description": "This will charge $50.00 to your account.", "severity": "warning",
        "timeout_seconds": 1,
    }, rpc_id="c"))
    ask = await user.recv_until(is_method("ui.confirm"))
    assert ask["params"]["timeout_seconds"] == 1
    reply = await agent.recv_until(is_reply("c"))
    assert reply["error"]["code"] == -32004
    assert reply["error"]["data"] == {"request_id": "buy", "approved": False}
    closed = await user.recv_until(is_method("a2ui.request_closed"))
    assert closed["params"] == {"request_id": "buy", "status": "timed_out"}
    await user.send(rpc("user.approve", {"request_id": "buy", "approved": True}, rpc_id="late"))
    late = await user.recv_until(is_reply("late"))
    assert late["error"]["code"] == -32004


# A process dies --------------------------------------------------------------------------------


async def test_sigkill_then_resume_on_the_other_process(two_servers, user, agent, stream_token,
                                                        agent_key):
    a, b = two_servers
    ui = await open_user(a, stream_token)
    sid = await init_session(ui)
    bot = await open_agent(b, agent_key)
    for cid, text in (("a", "# first"), ("b", "# second"), ("c", "# third")):
        reply = await bot.call("ui.render", {
            "session_id": sid, "component_id": cid, "component_type": "markdown",
            "data": {"content": text}}, rpc_id=f"render-{cid}")
        assert reply["result"]["delivered"] is True
    reply = await bot.call("ui.update", {
        "session_id": sid, "component_id": "b", "operation": "replace",
        "data": {"content": "# second, updated"}}, rpc_id="update-b")
    assert "result" in reply, reply
    await bot.send(rpc("ui.request_input", {
        "session_id": sid, "request_id": "q", "input_type": "number",
        "prompt": "How many?"}, rpc_id="ask"))
    await ui.recv_until(is_method("ui.request_input"))

    a.kill()  # SIGKILL: no close frame, no disconnect handler, no detach
    code, _, _ = await ui.expect_close()
    assert code is None  # the connection just dropped (1006)

    ui2 = await open_user(b, await new_token(user, agent))
    assert await init_session(ui2, session_id=sid) == sid
    replay = [await ui2.recv() for _ in range(4)]
    assert [m["method"] for m in replay] == ["ui.render"] * 3 + ["ui.request_input"]
    assert [m["params"]["component_id"] for m in replay[:3]] == ["a", "b", "c"]
    assert replay[1]["params"]["data"] == {"content": "# second, updated"}
    assert replay[3]["params"]["request_id"] == "q"
    resumed = await bot.recv_until(is_method("session.resumed"))
    assert resumed["params"]["session_id"] == sid

    await ui2.send(rpc("user.respond", {"request_id": "q", "value": 3}))
    answer = await bot.recv_until(is_reply("ask"))
    assert answer["result"] == 3
    # Pushes keep flowing to the resumed socket.
    await bot.send(rpc("ui.notify", {"session_id": sid, "level": "info", "title": "Back"}))
    note = await ui2.recv_until(is_method("ui.notify"))
    assert note["params"]["title"] == "Back"


# Limits shared by the processes ----------------------------------------------------------------


async def test_agent_session_limit_across_processes(two_servers, user, agent):
    a, b = two_servers
    agent.max_concurrent_sessions = 4  # a person's share: 2
    await database_sync_to_async(agent.save)()
    sockets = [await open_user(server, await new_token(user, agent)) for server in (a, b, a)]
    # Three inits race on two processes: the agent row lock admits exactly two.
    replies = await asyncio.gather(*(init(s, rpc_id=f"i{n}") for n, s in enumerate(sockets)))
    admitted = [r for r in replies if "result" in r]
    refused = [r for r in replies if "error" in r]
    assert len(admitted) == 2 and len(refused) == 1, replies
    assert refused[0]["error"]["code"] == -32007
    assert refused[0]["error"]["data"] == {"limit": 2, "per": "person"}
    late = await open_user(b, await new_token(user, agent))
    reply = await init(late, rpc_id="late")
    assert reply["error"]["code"] == -32007


def _wait_for_fresh_rate_window(needed_seconds=20):
    """The limit counts per fixed minute: start early in one, so 61 requests share it."""
    into = time.time() % 60
    if into > 60 - needed_seconds:
        time.sleep(60 - into + 0.05)


async def test_rate_limit_is_shared_across_processes(two_servers, user, agent, stream_token):
    a, b = two_servers
    first = await open_user(a, stream_token)
    sid = await init_session(first)
    second = await open_user(b, await new_token(user, agent))
    assert await init_session(second, session_id=sid) == sid  # one session, two processes
    await asyncio.to_thread(_wait_for_fresh_rate_window)
    for i in range(30):
        for name, sock in (("a", first), ("b", second)):
            reply = await sock.call("user.cancel", {"task_id": "t"}, rpc_id=f"{name}{i}")
            assert reply.get("result") == {"ok": True}, reply
    for name, sock in (("a", first), ("b", second)):  # the 61st and 62nd of this session
        reply = await sock.call("user.cancel", {"task_id": "t"}, rpc_id=f"over-{name}")
        assert reply["error"]["code"] == -32001, reply
        assert reply["error"]["data"] == {"limit_per_minute": 60}


# REST --------------------------------------------------------------------------------------------


async def test_rest_push_reaches_a_socket_on_the_other_process(two_servers, stream_token,
                                                               agent_key):
    a, b = two_servers
    ui = await open_user(a, stream_token)
    sid = await init_session(ui)
    status, body = await ahttp(
        "POST", f"{b.url}/api/v4/sessions/{sid}/messages",
        [rpc("ui.progress", {"task_id": "t1", "progress_type": "determinate", "value": 50,
                             "total": 100, "message": "Searching..."}),
         rpc("ui.notify", {"level": "success", "title": "Search Complete",
                           "message": "Found 2 results.", "duration_ms": 3000})],
        headers={"Authorization": f"Bearer {agent_key}"},
    )
    assert status == 202, body
    assert [d["method"] for d in body["delivered"]] == ["ui.progress", "ui.notify"]
    assert body["delivered"][1]["seq"] == body["delivered"][0]["seq"] + 1
    progress = await ui.recv_until(is_method("ui.progress"))
    assert progress["params"]["value"] == 50 and progress["params"]["message"] == "Searching..."
    note = await ui.recv()
    assert note["method"] == "ui.notify" and note["params"]["title"] == "Search Complete"


# Token isolation (seed section 8.3) ------------------------------------------------------------


async def test_stream_token_is_refused_by_rest(two_servers, stream_token):
    a, _ = two_servers
    sid = "550e8400-e29b-41d4-a716-446655440000"
    for method, path, body, headers in [
        ("POST", "/api/v4/stream-token", {"token_type": "stream_a2ui"},
         {"Authorization": f"Bearer {stream_token}"}),
        ("POST", f"/api/v4/stream-token?token={stream_token}", {"token_type": "stream_a2ui"},
         {}),
        ("POST", f"/api/v4/sessions/{sid}/messages",
         rpc("ui.notify", {"level": "info", "title": "x"}),
         {"Authorization": f"Bearer {stream_token}"}),
    ]:
        status, reply = await ahttp(method, a.url + path, body, headers=headers)
        assert status == 401, (path, status, reply)


@pytest.mark.parametrize("credential", ["drf_token", "agent_key_query", "agent_key_header",
                                        "none", "garbage"])
async def test_user_socket_refuses_other_credentials(two_servers, user, agent_key, credential):
    from rest_framework.authtoken.models import Token

    a, _ = two_servers
    url = f"{a.ws_url}/ws/v4/a2ui"
    headers = {}
    if credential == "drf_token":
        key = (await database_sync_to_async(Token.objects.create)(user=user)).key
        url += f"?token={key}"
    elif credential == "agent_key_query":
        url += f"?token={agent_key}"
    elif credential == "agent_key_header":
        headers["Authorization"] = f"Bearer {agent_key}"
    elif credential == "garbage":
        url += "?token=eyJub3QiOiJhIHRva2VuIn0:abc:def"

    sock = await Client.open(url, headers=headers)
    reply = await sock.recv()
    assert reply["error"]["code"] == -32006 and reply["id"] is None, reply
    code, _, _ = await sock.expect_close()
    assert code == 4006


async def test_agent_socket_refuses_a_stream_token(two_servers, stream_token):
    _, b = two_servers

    for url, headers in [
        (f"{b.ws_url}/ws/v4/a2ui/agent", {"Authorization": f"Bearer {stream_token}"}),
        (f"{b.ws_url}/ws/v4/a2ui/agent?token={stream_token}", {}),
    ]:
        sock = await Client.open(url, headers=headers)
        reply = await sock.recv()
        assert reply["error"]["code"] == -32006, reply
        code, _, _ = await sock.expect_close()
        assert code == 4006


# Idle sockets ------------------------------------------------------------------------------------


async def test_idle_sockets_outlive_the_channel_layer_block_timeout(two_servers, stream_token,
                                                                   agent_key):
    """channels-redis blocks 5 s per BZPOPMIN; a Redis read timeout as short killed idle sockets."""
    a, b = two_servers
    bot = await open_agent(b, agent_key)  # an agent that is there, idle (it answers pings)
    ui = await open_user(a, stream_token)
    sid = await init_session(ui)
    await bot.recv_until(is_method("session.opened"))
    with pytest.raises(TimeoutError):  # the scenario itself: both sockets idle for 12 s
        await ui.recv(timeout=12)
    reply = await bot.call("ui.notify", {"session_id": sid, "level": "info", "title": "Still here"},
                           rpc_id="n")
    assert reply["result"]["delivered"] is True
    assert (await ui.recv_until(is_method("ui.notify")))["params"]["title"] == "Still here"
    reply = await ui.call("user.cancel", {"task_id": "t"}, rpc_id="c")
    assert reply["result"] == {"ok": True}
