"""Traces (A2UI['TRACING']): the trace context read sans-I/O, nothing of OpenTelemetry imported
when off, and in process (the SDK's InMemorySpanExporter) the spans of a REST push and of an
MCP tool push with ``_meta.traceparent``, and their parents. Across two processes:
tests/live/test_live_tracing.py."""

import sys
import types

import pytest
from django.test import override_settings
from rest_framework.test import APIClient

from a2ui.core import tracecontext
from a2ui.infra import tracing

TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"
PARENT = f"00-{TRACE}-00f067aa0ba902b7-01"


# The trace context, sans-I/O ------------------------------------------------------------------

def test_a_valid_traceparent_is_read():
    parsed = tracecontext.parse(PARENT)
    assert parsed == (TRACE, "00f067aa0ba902b7", 1) and parsed.sampled
    assert tracecontext.format(parsed) == PARENT
    assert tracecontext.parse(f"  {PARENT}  ") == parsed
    # A later version may add fields: read the four we know.
    assert tracecontext.parse(f"01-{TRACE}-00f067aa0ba902b7-00-extra").sampled is False


@pytest.mark.parametrize("value", [
    None, 5, b"00", "", "garbage", PARENT.upper(), PARENT + "-x", PARENT[:-1],
    f"ff-{TRACE}-00f067aa0ba902b7-01", f"00-{'0' * 32}-00f067aa0ba902b7-01",
    f"00-{TRACE}-{'0' * 16}-01", f"00-{TRACE[:-1]}-00f067aa0ba902b7-01",
    f"00-{TRACE}-00f067aa0ba902b7-0g", "00-" + "a" * 600, "\x00" * 55,
])
def test_an_invalid_traceparent_is_ignored(value):
    assert tracecontext.parse(value) is None
    assert tracecontext.from_meta({"traceparent": value, "tracestate": "a=b"}) == (None, None)


def test_headers_and_meta():
    assert tracecontext.from_headers([(b"Traceparent", PARENT.encode()),
                                      (b"tracestate", b"k=v")]) == (PARENT, "k=v")
    assert tracecontext.from_headers({"traceparent": PARENT}) == (PARENT, None)
    assert tracecontext.from_headers([(b"tracestate", b"k=v")]) == (None, None)
    assert tracecontext.from_headers(None) == (None, None)
    assert tracecontext.from_meta({"traceparent": PARENT, "tracestate": "x" * 600}) == (
        PARENT, None)
    assert tracecontext.from_meta({"traceparent": PARENT, "tracestate": "a\nb"}) == (
        PARENT, None)
    for meta in (None, [], "x", {}, {"tracestate": "a=b"}):
        assert tracecontext.from_meta(meta) == (None, None)


# In process -------------------------------------------------------------------------------------



def _rest_render(agent_key, session, **headers):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {agent_key}", **headers)
    return client.post(f"/api/v4/sessions/{session.session_id}/messages", {
        "jsonrpc": "2.0", "method": "ui.render", "params": {
            "component_id": "c1", "component_type": "card", "data": {"title": "t"}}},
        format="json")


class _Watch:
    """A meta path finder noting every import of an ``opentelemetry`` module."""

    def __init__(self):
        self.seen = []

    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] == "opentelemetry":
            self.seen.append(name)
        return None


@pytest.mark.django_db(transaction=True)
def test_with_tracing_off_a_push_imports_nothing_of_opentelemetry(
        monkeypatch, session, agent_key):
    tracing.reset()
    for name in [n for n in sys.modules if n.split(".")[0] == "opentelemetry"]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.delitem(sys.modules, "a2ui.infra._otel", raising=False)
    watch = _Watch()
    monkeypatch.setattr(sys, "meta_path", [watch, *sys.meta_path])
    response = _rest_render(agent_key, session, HTTP_TRACEPARENT=PARENT)
    assert response.status_code == 202, response.content
    assert watch.seen == [] and "a2ui.infra._otel" not in sys.modules
    assert tracing.span("x") is tracing.span("y")  # the one shared no-op
    assert tracing.current() is None and tracing.inject({}) == {}


@pytest.fixture
def spans(settings):
    pytest.importorskip("opentelemetry.sdk")
    from tests import spanfile

    tracing.reset()
    with override_settings(A2UI={**settings.A2UI, "TRACING": True,
                                 "TRACING_EXPORTER": "tests.spanfile.in_memory",
                                 "TRACING_SIMPLE_PROCESSOR": True}):
        assert tracing.enabled()  # configures the provider: a new spanfile.memory
        yield spanfile.memory
    tracing.reset()


def _named(exporter, name):
    found = [s for s in exporter.get_finished_spans() if s.name == name]
    assert len(found) == 1, [s.name for s in exporter.get_finished_spans()]
    return found[0]


@pytest.mark.django_db(transaction=True)
def test_a_rest_push_is_a_child_of_the_callers_traceparent(spans, session, agent_key):
    response = _rest_render(agent_key, session, HTTP_TRACEPARENT=PARENT,
                            HTTP_TRACESTATE="vendor=1")
    assert response.status_code == 202, response.content
    rest, push = _named(spans, "a2ui.rest.messages"), _named(spans, "a2ui.push")
    assert f"{rest.context.trace_id:032x}" == TRACE
    assert rest.parent.is_remote and f"{rest.parent.span_id:016x}" == "00f067aa0ba902b7"
    assert rest.context.trace_state.get("vendor") == "1"
    assert push.parent.span_id == rest.context.span_id
    assert push.context.trace_id == rest.context.trace_id
    assert push.attributes["a2ui.session"] == str(session.session_id)


@pytest.mark.django_db(transaction=True)
def test_a_rest_push_with_a_bad_traceparent_starts_its_own_trace(spans, session, agent_key):
    response = _rest_render(agent_key, session, HTTP_TRACEPARENT="00-nope")
    assert response.status_code == 202, response.content
    rest = _named(spans, "a2ui.rest.messages")
    assert rest.parent is None and f"{rest.context.trace_id:032x}" != TRACE


@pytest.mark.django_db(transaction=True)
async def test_an_mcp_tool_push_is_a_child_of_meta_traceparent(spans, session, agent):
    from a2ui.mcp import server

    trace = "0af7651916cd43dd8448eb211c80319c"
    who = types.SimpleNamespace(kind="agent", agent=agent)
    ctx = types.SimpleNamespace(
        request=types.SimpleNamespace(scope={"a2ui_mcp": who}),
        params={"_meta": {"traceparent": f"00-{trace}-b7ad6b7169203331-01"}})
    params = types.SimpleNamespace(name="notify", arguments={
        "session_id": str(session.session_id), "title": "Hi"})
    result = await server.call_tool(ctx, params)
    assert not result.is_error
    tool, push = _named(spans, "a2ui.mcp.tool"), _named(spans, "a2ui.push")
    assert f"{tool.context.trace_id:032x}" == trace
    assert f"{tool.parent.span_id:016x}" == "b7ad6b7169203331"
    assert push.parent.span_id == tool.context.span_id
    assert push.attributes["a2ui.kind"] == "notify"


@pytest.mark.django_db(transaction=True)
async def test_a_python_api_push_joins_the_callers_current_span(spans, session, agent):
    from opentelemetry.sdk.trace import TracerProvider

    from a2ui import agents

    caller = TracerProvider().get_tracer("agent")
    with caller.start_as_current_span("agent.work") as work:
        await agents.anotify(agent, str(session.session_id), "Hi")
    push = _named(spans, "a2ui.push")
    assert push.parent.span_id == work.get_span_context().span_id
    assert push.context.trace_id == work.get_span_context().trace_id


@pytest.mark.django_db(transaction=True)
async def test_an_agent_socket_push_reaches_the_persons_socket_in_one_trace(
        spans, stream_token, agent_key):
    from tests.wsutil import agent_and_person, recv_until, send

    trace = "5bf92f3577b34da6a3ce929d0e0e4737"
    bot, person, sid = await agent_and_person(stream_token, agent_key)
    try:
        await send(bot, {"jsonrpc": "2.0", "id": "r1", "method": "ui.render", "params": {
            "session_id": sid, "component_id": "c1", "component_type": "card",
            "data": {"title": "t"}, "_meta": {"traceparent": f"00-{trace}-1111111111111111-01"}}})
        assert "result" in await recv_until(bot, lambda m: m.get("id") == "r1")
        await recv_until(person, lambda m: m.get("method") == "ui.render")
    finally:
        await bot.disconnect()
        await person.disconnect()
    call, push = _named(spans, "a2ui.agent.call"), _named(spans, "a2ui.push")
    deliver = _named(spans, "a2ui.deliver")
    assert f"{call.context.trace_id:032x}" == trace
    assert f"{call.parent.span_id:016x}" == "1111111111111111"
    assert push.parent.span_id == call.context.span_id
    assert deliver.parent.span_id == push.context.span_id
    assert deliver.context.trace_id == push.context.trace_id


@pytest.mark.django_db(transaction=True)
async def test_the_persons_answer_reaches_the_agent_in_the_requests_trace(
        spans, stream_token, agent_key):
    from tests.wsutil import agent_and_person, recv_until, send

    trace = "6bf92f3577b34da6a3ce929d0e0e4738"
    bot, person, sid = await agent_and_person(stream_token, agent_key)
    try:
        await send(bot, {"jsonrpc": "2.0", "id": "ask", "method": "ui.request_input", "params": {
            "session_id": sid, "request_id": "r1", "input_type": "text", "prompt": "Name?",
            "_meta": {"traceparent": f"00-{trace}-2222222222222222-01"}}})
        await recv_until(person, lambda m: m.get("method") == "ui.request_input")
        await send(person, {"jsonrpc": "2.0", "id": "ans", "method": "user.respond",
                            "params": {"request_id": "r1", "value": "Ada"}})
        reply = await recv_until(bot, lambda m: m.get("id") == "ask")
        assert reply["result"] == "Ada"
    finally:
        await bot.disconnect()
        await person.disconnect()
    call, push = _named(spans, "a2ui.agent.call"), _named(spans, "a2ui.push")
    answer = _named(spans, "a2ui.answer")
    assert f"{call.parent.span_id:016x}" == "2222222222222222"
    assert push.parent.span_id == call.context.span_id
    assert answer.parent.span_id == call.context.span_id
    assert answer.context.trace_id == call.context.trace_id
    assert answer.attributes["a2ui.status"] == "answered"


@pytest.mark.django_db(transaction=True)
def test_a_rest_agui_push_is_a_child_of_the_callers_traceparent(spans, session, agent_key):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {agent_key}", HTTP_TRACEPARENT=PARENT)
    response = client.post(f"/api/v4/sessions/{session.session_id}/agui", {"event": {
        "type": "TEXT_MESSAGE", "sender": "bot", "content": "Hi", "role": "agent"}},
        format="json")
    assert response.status_code == 202, response.content
    rest, push = _named(spans, "a2ui.rest.push"), _named(spans, "a2ui.push")
    assert f"{rest.parent.span_id:016x}" == "00f067aa0ba902b7"
    assert rest.attributes["a2ui.method"] == "agui.event"
    assert push.parent.span_id == rest.context.span_id
