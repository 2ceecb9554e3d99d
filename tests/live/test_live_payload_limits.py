"""Tier 2: the payload limit and shutdown as served (``manage.py a2ui_serve``), on real sockets.

A frame one byte over ``MAX_PAYLOAD_SIZE`` reaches the app and gets the protocol's payload
error (-32002 on both seed-000 sockets, ``PAYLOAD_TOO_LARGE`` on /ws/v09); the socket stays
open and answers (seed 000 section 8.2: such messages are "rejected with an error", and
docs/protocol-jsonrpc.md: a too-large message "normally just gets an error response"). Past the
transport's hard cap (twice the limit) the socket is closed with 1009, never dropped (1006).
Over REST a body past the limit gets 413 with a message.
"""

import asyncio
import json
import signal
import urllib.request

import pytest

from a2ui.conf import a2ui_settings
from a2ui.core.surfaces import BASIC_CATALOG_ID
from a2ui.models import A2UISessionLog
from a2ui.serving import websocket_hard_cap
from tests.live.client import Client, init_session, open_agent, open_user

pytestmark = pytest.mark.django_db(transaction=True)

LIMIT = a2ui_settings.MAX_PAYLOAD_SIZE
CAP = websocket_hard_cap()
TOO_BIG = 1009


def jsonrpc_frame(size, session_id):
    """A well-formed ui.notify of exactly ``size`` bytes: only its size can be wrong."""
    head = json.dumps({"jsonrpc": "2.0", "method": "ui.notify", "id": "big",
                       "params": {"session_id": session_id, "title": ""}})[:-3]
    frame = head + "x" * (size - len(head) - 3) + '"}}'
    assert len(frame.encode()) == size
    return frame


def v09_frame(size):
    head = json.dumps({"version": "v0.9", "action": {"name": ""}})[:-3]
    frame = head + "x" * (size - len(head) - 3) + '"}}'
    assert len(frame.encode()) == size
    return frame


async def expect_payload_error(client):
    reply = await client.recv_until(lambda m: "method" not in m)  # not a push
    assert reply["error"]["code"] == -32002, str(reply)[:300]
    assert reply["id"] is None  # the size is checked before parsing: the id is unknown
    return reply


async def expect_too_big_close(client):
    code, reason, before = await client.expect_close()
    assert code == TOO_BIG, (code, reason, str(before)[:300])


async def open_v09(server, token):
    ws = await Client.open(f"{server.ws_url}/ws/v09/a2ui?token={token}")
    await ws.send({"version": "v0.9", "capabilities": {
        "v0.9": {"supportedCatalogIds": [BASIC_CATALOG_ID]}}})
    hello = await ws.recv()
    return ws, hello["session"]["sessionId"]


def assert_clean_log(server):
    log = server.log()
    assert "Traceback" not in log, log[-3000:]


async def test_one_byte_over_the_limit_gets_32002_on_both_seed_sockets(
        daphne_server, stream_token, agent_key):
    server = daphne_server()
    agent = await open_agent(server, agent_key)
    user = await open_user(server, stream_token)
    sid = await init_session(user)

    await agent.send_text(jsonrpc_frame(LIMIT + 1, sid))
    await expect_payload_error(agent)
    # The agent socket still works: a push reaches the person.
    reply = await agent.call("ui.notify", {"session_id": sid, "title": "still here",
                                         "message": "after -32002", "level": "info"}, "n")
    assert reply.get("result") is not None, reply
    note = await user.recv_until(lambda m: m.get("method") == "ui.notify")
    assert note["params"]["title"] == "still here"

    await user.send_text(jsonrpc_frame(LIMIT + 1, sid))
    await expect_payload_error(user)
    # The user socket still answers.
    await user.send({"jsonrpc": "2.0", "id": "q", "method": "no.such"})
    answer = await user.recv_until(lambda m: m.get("id") == "q")
    assert answer["error"]["code"] == -32601
    await user.close()
    await agent.close()
    assert_clean_log(server)


async def test_one_byte_over_the_limit_gets_payload_error_on_v09(daphne_server, stream_token):
    server = daphne_server()
    ws, _sid = await open_v09(server, stream_token)
    await ws.send_text(v09_frame(LIMIT + 1))
    err = await ws.recv()
    assert err["error"]["code"] == "PAYLOAD_TOO_LARGE", str(err)[:300]
    assert err["error"]["rpcCode"] == -32002
    # The socket still answers.
    await ws.send({"version": "v0.9", "action": {"name": "x"}})
    again = await ws.recv()
    assert again["error"]["code"] == "VALIDATION_FAILED", again
    await ws.close()
    assert_clean_log(server)


async def test_frames_up_to_the_cap_get_the_error_beyond_it_close_1009(
        daphne_server, stream_token, agent_key):
    server = daphne_server()
    agent = await open_agent(server, agent_key)
    user = await open_user(server, stream_token)
    sid = await init_session(user)
    ws, _ = await open_v09(server, stream_token)

    # Exactly the cap: still the app's answer.
    await agent.send_text(jsonrpc_frame(CAP, sid))
    await expect_payload_error(agent)
    await user.send_text(jsonrpc_frame(CAP, sid))
    await expect_payload_error(user)
    await ws.send_text(v09_frame(CAP))
    assert (await ws.recv())["error"]["rpcCode"] == -32002

    # One byte more: the transport refuses to buffer it and says so with a close frame.
    for client, frame in ((agent, jsonrpc_frame(CAP + 1, sid)),
                          (user, jsonrpc_frame(CAP + 1, sid)), (ws, v09_frame(CAP + 1))):
        await client.send_text(frame)
        await expect_too_big_close(client)
    # The server is fine: a new socket gets its session.
    again = await open_user(server, stream_token)
    assert await init_session(again)
    await again.close()
    assert_clean_log(server)


async def test_rest_body_over_the_limit_is_413_with_a_message(daphne_server, agent_key, user):
    server = daphne_server()
    url = f"{server.url}/api/v4/sessions/00000000-0000-0000-0000-000000000000/messages"
    for size in (LIMIT + 1, CAP + 1, 4 * LIMIT):
        body = jsonrpc_frame(size, "00000000-0000-0000-0000-000000000000").encode()
        req = urllib.request.Request(url, data=body, method="POST", headers={
            "Content-Type": "application/json", "Authorization": f"Bearer {agent_key}"})
        try:
            with urllib.request.urlopen(req, timeout=30) as resp:
                status, raw = resp.status, resp.read()
        except urllib.error.HTTPError as exc:
            status, raw = exc.code, exc.read()
        assert status == 413, (size, status, raw[:300])
        assert "MAX_PAYLOAD_SIZE" in json.loads(raw)["detail"], raw[:300]
    assert_clean_log(server)


async def test_sigterm_closes_every_socket_with_1001_and_exits_0(daphne_server, stream_token,
                                                                agent_key):
    """The consumers see the disconnect (the person's session is recorded as detached, so it
    closes on time if nobody resumes it) before the rest is cancelled."""
    server = daphne_server()
    agent = await open_agent(server, agent_key)
    user = await open_user(server, stream_token)
    sid = await init_session(user)
    ws, _ = await open_v09(server, stream_token)
    # a2ui_serve ran itself again with C malloc as Python's allocator (--allocator): the same
    # process, which the SIGTERM below still stops cleanly
    with open(f"/proc/{server.proc.pid}/environ", "rb") as f:
        assert b"PYTHONMALLOC=malloc" in f.read().split(b"\0")
    server.proc.send_signal(signal.SIGTERM)
    for client in (agent, user, ws):
        code, reason, _ = await client.expect_close()
        assert (code, reason) == (1001, "server shutting down")
    assert await asyncio.to_thread(server.proc.wait, 10) == 0
    assert_clean_log(server)
    session = await A2UISessionLog.objects.aget(pk=sid)
    assert session.detached_at is not None


async def test_the_limit_counts_bytes_not_characters_on_v09(daphne_server, stream_token):
    """A frame of LIMIT+1 UTF-8 bytes in two-byte characters has fewer than LIMIT characters."""
    server = daphne_server()
    ws, _sid = await open_v09(server, stream_token)
    head = json.dumps({"version": "v0.9", "action": {"name": ""}})[:-3]
    room = LIMIT + 1 - len(head) - 3
    frame = head + "é" * (room // 2) + "x" * (room % 2) + '"}}'
    assert len(frame.encode()) == LIMIT + 1 and len(frame) <= LIMIT
    await ws.send_text(frame)
    err = await ws.recv()
    assert err["error"]["code"] == "PAYLOAD_TOO_LARGE", str(err)[:300]
    await ws.close()
