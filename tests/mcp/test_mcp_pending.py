"""An MCP-only agent gets the person's answer after its process died (issue 23, item 4).

In-process, on the handshake era (an MCP session, as ``ClientSession`` speaks): a
``request_input`` call whose client hangs up stops waiting and leaves the request open (the SDK
keeps the call running: it took the answer for a client that was gone); the person answers;
the agent gets the answer with the ``pending_requests`` tool, once, and by calling
``request_input`` again with the same ``request_id`` (each time). A retry while the first call
still waits takes the request over: the person is asked once. (A SIGKILLed client against real
Daphne: tests/live/test_live_mcp_pending.py.)
"""

import asyncio
import json

import pytest
from channels.db import database_sync_to_async

from a2ui.models import PendingRequest
from a2ui.push import answers
from a2ui.push import sessions as session_actions
from tests.fuzz.mcp import INIT_BODY, MCP_HEADERS, PROTOCOL_VERSION, AsgiHttp, messages
from tests.push.test_answer_delivery import answer
from tests.wsutil import connect_user, init_session, recv_until

pytestmark = pytest.mark.django_db(transaction=True)


class Agent:
    """An MCP agent in-process: raw JSON-RPC over the app's ASGI interface."""

    def __init__(self, agent_key):
        from django.conf import settings

        from a2ui.mcp.app import MCPApp
        from a2ui.mcp.server import build_server

        self.app = MCPApp(build_server(), settings.ALLOWED_HOSTS,
                          max_request_body_size=1_048_576)
        self.http = AsgiHttp(self.app)
        self.headers = {**MCP_HEADERS, "Authorization": f"Bearer {agent_key}"}
        self.ids = 1

    async def start(self):
        response = await self.http.request("POST", self.headers, json.dumps(INIT_BODY).encode())
        self.headers["Mcp-Session-Id"] = response.headers["mcp-session-id"]
        self.headers["Mcp-Protocol-Version"] = PROTOCOL_VERSION
        return self

    async def tool(self, name, arguments, *, timeout=10.0):
        """The tool's JSON-RPC answer, or None when the client hung up after ``timeout``."""
        self.ids += 1
        rpc_id = self.ids
        body = {"jsonrpc": "2.0", "id": rpc_id, "method": "tools/call",
                "params": {"name": name, "arguments": arguments}}
        response = await self.http.request("POST", self.headers, json.dumps(body).encode(),
                                           timeout=timeout)
        answers = [m for m in messages(response.text) if m.get("id") == rpc_id]
        return answers[0] if answers else None


def result(answer):
    assert "result" in answer, answer
    return answer["result"]["structuredContent"], answer["result"].get("isError", False)


async def _setup(stream_token, agent_key):
    person = await connect_user(stream_token)
    sid = await init_session(person)
    return person, sid, await Agent(agent_key).start()


async def test_a_call_whose_client_hung_up_leaves_the_answer_for_pending_requests(
        stream_token, agent_key):
    person, sid, mcp = await _setup(stream_token, agent_key)
    ask = {"session_id": sid, "input_type": "text", "prompt": "Your name?", "request_id": "r1"}
    try:
        assert await mcp.tool("request_input", ask, timeout=1.0) is None  # the client died
        await recv_until(person, lambda m: m.get("method") == "ui.request_input")
        await asyncio.sleep(0.3)  # the call has stopped waiting
        assert (await answer(person))["result"] == {"ok": True}
        await asyncio.sleep(0.3)  # nobody claims it
        stored = await database_sync_to_async(PendingRequest.objects.get)(request_id="r1")
        assert stored.status == "answered" and stored.delivered_at is None

        listed, is_error = result(await mcp.tool("pending_requests", {"session_id": sid}))
        assert not is_error
        [item] = listed["requests"]
        assert (item["request_id"], item["status"], item["answer"]) == ("r1", "answered", "Ada")
        assert item["method"] == "ui.request_input" and item["params"]["prompt"] == "Your name?"
        assert result(await mcp.tool("pending_requests", {}))[0] == {"requests": []}  # once
        bad = await mcp.tool("pending_requests", {"session_id": "x"})
        assert bad["error"]["code"] == -32000
    finally:
        await mcp.app.runner.stop()
        await person.disconnect()


async def test_request_input_again_with_the_same_request_id_returns_the_answer(
        stream_token, agent_key):
    person, sid, mcp = await _setup(stream_token, agent_key)
    ask = {"session_id": sid, "input_type": "text", "prompt": "Your name?", "request_id": "r1"}
    try:
        assert await mcp.tool("request_input", ask, timeout=1.0) is None
        await recv_until(person, lambda m: m.get("method") == "ui.request_input")
        await asyncio.sleep(0.3)
        assert (await answer(person, value="Ada"))["result"] == {"ok": True}
        await recv_until(person, lambda m: m.get("method") == "a2ui.request_closed")
        for _ in range(2):  # at once, and again: a retry is safe
            out, is_error = result(await mcp.tool("request_input", ask, timeout=5.0))
            assert not is_error
            assert out == {"request_id": "r1", "status": "answered", "value": "Ada"}
        assert await person.receive_nothing(0.3)  # not asked again
        other = await mcp.tool("request_input", {**ask, "prompt": "Your city?"})
        assert other["error"]["code"] == -32602
        assert "another request" in other["error"]["message"]
        assert other["error"]["data"]["path"] == "arguments.request_id"
    finally:
        await mcp.app.runner.stop()
        await person.disconnect()


async def test_a_retry_while_the_first_call_waits_takes_it_over(stream_token, agent_key):
    person, sid, mcp = await _setup(stream_token, agent_key)
    ask = {"session_id": sid, "input_type": "text", "prompt": "Your name?", "request_id": "r1"}
    try:
        first = asyncio.ensure_future(mcp.tool("request_input", ask))
        await recv_until(person, lambda m: m.get("method") == "ui.request_input")
        second = asyncio.ensure_future(mcp.tool("request_input", ask))
        lost = await asyncio.wait_for(first, 5)
        assert lost["error"]["code"] == -32011, lost  # taken over by the retry
        assert await person.receive_nothing(0.3)  # the person is asked once
        assert (await answer(person, value="Ada"))["result"] == {"ok": True}
        out, is_error = result(await asyncio.wait_for(second, 5))
        assert not is_error and out["value"] == "Ada"
    finally:
        await mcp.app.runner.stop()
        await person.disconnect()


async def test_notifications_cancelled_still_withdraws_the_request(stream_token, agent_key):
    """Only the client's cancel withdraws a request (a closed stream leaves it open)."""
    person, sid, mcp = await _setup(stream_token, agent_key)
    ask = {"session_id": sid, "input_type": "text", "prompt": "Your name?", "request_id": "r1"}
    try:
        asking = asyncio.ensure_future(mcp.tool("request_input", ask))
        await recv_until(person, lambda m: m.get("method") == "ui.request_input")
        cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled",
                  "params": {"requestId": mcp.ids, "reason": "no longer needed"}}
        response = await mcp.http.request("POST", mcp.headers, json.dumps(cancel).encode())
        assert response.status == 202
        closed = await recv_until(person, lambda m: m.get("method") == "a2ui.request_closed")
        assert closed["params"] == {"request_id": "r1", "status": "timed_out"}
        await asyncio.wait_for(asking, 10)
    finally:
        await mcp.app.runner.stop()
        await person.disconnect()


async def test_a_request_the_person_cancels_ends_the_call_with_a_tool_error(
        stream_token, agent_key):
    """A person's cancel (an AG-UI client's ``resume`` ``cancelled``) is an outcome the model
    reads: a tool result with ``isError``, not a protocol error."""

    person, sid, mcp = await _setup(stream_token, agent_key)
    ask = {"session_id": sid, "input_type": "text", "prompt": "Your name?", "request_id": "r1"}
    try:
        asking = asyncio.ensure_future(mcp.tool("request_input", ask))
        await recv_until(person, lambda m: m.get("method") == "ui.request_input")
        assert await answers.acancel(sid, "r1")
        out, is_error = result(await asyncio.wait_for(asking, 10))
        assert is_error and out["status"] == "cancelled" and out["cancelled_by"] == "person", out
        assert out["request_id"] == "r1"
    finally:
        await mcp.app.runner.stop()
        await person.disconnect()


async def test_a_session_that_closes_ends_the_call_with_a_tool_error(stream_token, agent_key):
    person, sid, mcp = await _setup(stream_token, agent_key)
    ask = {"session_id": sid, "title": "Buy?", "request_id": "c1"}
    try:
        asking = asyncio.ensure_future(mcp.tool("confirm", ask))
        await recv_until(person, lambda m: m.get("method") == "ui.confirm")

        await session_actions.aclose_session(sid, reason="closed by an operator")
        out, is_error = result(await asyncio.wait_for(asking, 10))
        assert is_error and out == {
            "request_id": "c1", "status": "session_closed",
            "error": "The session closed before the person answered."}, out
    finally:
        await mcp.app.runner.stop()
        await person.disconnect()
