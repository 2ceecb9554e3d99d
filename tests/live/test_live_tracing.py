"""Tier 2: one trace across two Daphne processes (A2UI['TRACING'] on, each process exporting
its spans to a file of its own, ``tests.spanfile.to_file``): an agent's push in process A,
with the caller's ``traceparent`` (REST header, MCP ``_meta``), is the parent of the delivery
span in process B, where the person's socket is."""

import asyncio
import time

import pytest

pytest.importorskip("opentelemetry.sdk")

from tests import spanfile  # noqa: E402
from tests.live.client import ahttp, init_session, open_user  # noqa: E402
from tests.live.mcpclient import mcp_session  # noqa: E402
from tests.live.test_live_mcp import issue  # noqa: E402

pytestmark = pytest.mark.django_db(transaction=True)

TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"
CALLER = "00f067aa0ba902b7"


def _env(path):
    return {"A2UI_TRACING": "1", "A2UI_TRACING_EXPORTER": "tests.spanfile.to_file",
            "A2UI_TRACING_SIMPLE_PROCESSOR": "1", "A2UI_TEST_SPAN_FILE": str(path)}


async def _span(path, name, trace_id, wait=10.0):
    """The span ``name`` of trace ``trace_id`` the process wrote to ``path`` (it is written
    when it ends, just after the message reached the socket)."""
    deadline = time.monotonic() + wait
    while True:
        found = [s for s in spanfile.read(path) if s["name"] == name
                 and s["context"]["trace_id"] == "0x" + trace_id]
        if found or time.monotonic() > deadline:
            assert found, (name, spanfile.read(path))
            return found[-1]
        await asyncio.sleep(0.05)


def _id(span):
    return span["context"]["span_id"]


async def test_a_push_in_one_process_parents_the_delivery_in_another(
        daphne_server, tmp_path, user, agent, agent_key):
    spans_a, spans_b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    server_a, server_b = daphne_server(**_env(spans_a)), daphne_server(**_env(spans_b))
    person = await open_user(server_b, await issue(user, agent))
    sid = await init_session(person)

    # REST, the caller's trace context in the traceparent header.
    status, body = await ahttp("POST", f"{server_a.url}/api/v4/sessions/{sid}/messages", {
        "jsonrpc": "2.0", "method": "ui.render", "params": {
            "component_id": "c1", "component_type": "card", "data": {"title": "t"}}},
        headers={"Authorization": f"Bearer {agent_key}",
                 "traceparent": f"00-{TRACE}-{CALLER}-01"})
    assert status == 202, body
    await person.recv_until(lambda m: m.get("method") == "ui.render")
    rest = await _span(spans_a, "a2ui.rest.messages", TRACE)
    push = await _span(spans_a, "a2ui.push", TRACE)
    deliver = await _span(spans_b, "a2ui.deliver", TRACE)
    assert rest["parent_id"] == "0x" + CALLER
    assert push["parent_id"] == _id(rest)
    assert deliver["parent_id"] == _id(push)  # across processes, over the channel layer
    assert not spanfile.read(spans_b) or all(
        s["name"] != "a2ui.push" for s in spanfile.read(spans_b))

    # An MCP tool, the caller's trace context in _meta (SEP-414).
    trace = "0af7651916cd43dd8448eb211c80319c"
    async with mcp_session(server_a, agent_key) as mcp:
        out = await mcp.call_tool("notify", {"session_id": sid, "title": "Hi"},
                                  meta={"traceparent": f"00-{trace}-b7ad6b7169203331-01"})
        assert not out.is_error
    await person.recv_until(lambda m: m.get("method") == "ui.notify")
    tool = await _span(spans_a, "a2ui.mcp.tool", trace)
    push = await _span(spans_a, "a2ui.push", trace)
    deliver = await _span(spans_b, "a2ui.deliver", trace)
    assert tool["parent_id"] == "0xb7ad6b7169203331"
    assert push["parent_id"] == _id(tool)
    assert deliver["parent_id"] == _id(push)
    await person.close()
