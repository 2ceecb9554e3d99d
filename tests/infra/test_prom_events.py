"""The Prometheus metrics of issue 28 (``a2ui.infra.prom``, docs/operations.md "Metrics"),
each moved by the event it counts, in-process: sessions per protocol, pending requests (read
from the database at the scrape), answer latency, resyncs, refused inputs and cap refusals,
outage errors of failures logged their own way; and the tallies the hooks add to, flushed into
``prometheus_client`` at the scrape."""

import asyncio
import re
import uuid

import pytest
from channels.testing import WebsocketCommunicator
from prometheus_client import CollectorRegistry, Histogram, generate_latest

from a2ui.infra import outages, prom
from a2ui.mcp import envelope
from a2ui.push import fanout as stream
from a2ui.requests import pending
from a2ui_project.asgi import application
from tests.agui.test_agui_socket import _issue, connected, open_agui
from tests.promutil import samples, scrape, value
from tests.wsutil import agent_and_person, connect_user, recv, recv_until, send

pytestmark = pytest.mark.django_db(transaction=True)


async def eventually(check, timeout=3.0):
    """Wait until ``check()`` is true (what a consumer does after the frame it answers)."""
    deadline = asyncio.get_running_loop().time() + timeout
    while not check():
        assert asyncio.get_running_loop().time() < deadline, "never happened"
        await asyncio.sleep(0.02)


async def test_sessions_pending_answers_and_refusals_on_the_jsonrpc_sockets(
        metrics_on, stream_token, agent_key):
    agent, person, sid = await agent_and_person(stream_token, agent_key)
    assert value(scrape(), "a2ui_sessions", protocol="jsonrpc") == 1

    await send(agent, {"jsonrpc": "2.0", "id": 7, "method": "ui.request_input", "params": {
        "session_id": sid, "request_id": "r1", "input_type": "text", "prompt": "Name?"}})
    await recv_until(person, lambda m: m.get("method") == "ui.request_input")
    await prom.asample(pending.open_counts, fresh=True)
    got = scrape()
    assert value(got, "a2ui_pending_requests", kind="input") == 1
    assert value(got, "a2ui_pending_requests", kind="confirm") == 0
    assert value(got, "a2ui_answer_latency_seconds_count", protocol="jsonrpc", kind="input") == 0

    await send(person, {"jsonrpc": "2.0", "method": "user.respond",
                        "params": {"request_id": "r1", "value": "Ada"}})
    await recv_until(agent, lambda m: m.get("id") == 7)
    await prom.asample(pending.open_counts, fresh=True)
    got = scrape()
    assert value(got, "a2ui_pending_requests", kind="input") == 0
    assert value(got, "a2ui_answer_latency_seconds_count", protocol="jsonrpc", kind="input") == 1
    assert value(got, "a2ui_answer_latency_seconds_bucket", protocol="jsonrpc", kind="input",
                 le="+Inf") == 1

    await person.send_to(text_data="not json")
    assert (await recv_until(person, lambda m: "error" in m))["error"]["code"] == -32700
    await send(agent, {"jsonrpc": "2.0", "id": 8, "method": "ui.nope", "params": {}})
    assert (await recv_until(agent, lambda m: m.get("id") == 8))["error"]["code"] == -32601
    got = scrape()
    assert value(got, "a2ui_refused_inputs_total", protocol="jsonrpc", reason="-32700") == 1
    assert value(got, "a2ui_refused_inputs_total", protocol="agent", reason="-32601") == 1

    await person.disconnect()
    assert value(scrape(), "a2ui_sessions", protocol="jsonrpc") == 0
    await agent.disconnect()


async def test_a_resync_order_is_counted_per_protocol(metrics_on, user, agent):
    person = await open_agui(await _issue(user, agent))
    sid = await connected(person)
    await stream.repair(uuid.UUID(sid))
    await eventually(lambda: value(scrape(), "a2ui_resyncs_total", protocol="agui",
                                   cause="order") == 1)
    assert value(scrape(), "a2ui_lost_sequence_repairs_total") == 1
    assert value(scrape(), "a2ui_sessions", protocol="agui") == 1
    await person.disconnect()


async def test_a_cap_refusal_is_counted_by_its_cap_and_as_a_refused_input(
        metrics_on, settings, stream_token):
    settings.A2UI = {**settings.A2UI, "CAP_SOCKETS_PER_PERSON": 1}
    first = await connect_user(stream_token)
    second = WebsocketCommunicator(application, f"/ws/v4/a2ui?token={stream_token}")
    await second.connect()
    assert (await recv(second))["error"]["code"] == -32001
    got = scrape()
    assert value(got, "a2ui_cap_refusals_total", kind="socket") == 1
    assert value(got, "a2ui_refused_inputs_total", protocol="jsonrpc", reason="-32001") == 1
    await second.disconnect()
    await first.disconnect()


def test_an_mcp_envelope_refusal_is_counted(metrics_on):
    assert envelope.check(b'[{"jsonrpc":"2.0","id":1,"method":"ping"}]') is not None
    assert value(scrape(), "a2ui_refused_inputs_total", protocol="mcp", reason="-32600") == 1


def test_an_outage_logged_its_own_way_is_counted(metrics_on):
    def outage_count():
        got = scrape()
        return sum(v for (name, _), v in got.items() if name == "a2ui_outage_errors_total")

    assert outages.tally(ValueError("a bug, not an outage")) is False
    assert outage_count() == 0
    try:
        raise ConnectionRefusedError(111, "refused")
    except ConnectionRefusedError:
        assert outages.tally() is True
    assert outage_count() == 1


def test_the_scrape_names_every_metric(metrics_on):
    body = prom.exposition()[1].decode()
    for name in ("a2ui_sockets", "a2ui_sessions", "a2ui_pushes", "a2ui_push_latency_seconds",
                 "a2ui_lost_sequence_repairs", "a2ui_resyncs", "a2ui_outage_errors",
                 "a2ui_refused_inputs", "a2ui_cap_refusals", "a2ui_answer_latency_seconds",
                 "a2ui_pending_requests", "a2ui_db_pool_queue_depth"):
        assert re.search(rf"^# HELP {name}(_total)? ", body, re.M), name


def test_hooks_reach_prometheus_client_only_when_flushed(metrics_on):
    prom.pushed(0.003, {"jsonrpc": 1})
    assert b'a2ui_pushes_total{protocol="jsonrpc"}' not in generate_latest(prom.registry)
    prom.flush()
    assert b'a2ui_pushes_total{protocol="jsonrpc"} 1.0' in generate_latest(prom.registry)
    prom.pushed(0.004, {"jsonrpc": 1}, count=2)
    assert value(scrape(), "a2ui_pushes_total", protocol="jsonrpc") == 3  # the scrape flushes


def test_a_flushed_histogram_is_what_prometheus_client_observes(metrics_on):
    """The tally's buckets (bisection, many observations added at once) against a Histogram
    that observed each value itself, bound values and beyond the last bound included."""
    values = [0, .0005, .0007, .001, .003, .005, .0051, .2, 1, 4.9, 5, 7.5, 120]
    reference = CollectorRegistry()
    real = Histogram("ref_seconds", "x", ["protocol"], buckets=prom.PUSH_BUCKETS,
                     registry=reference)
    for n, seconds in enumerate(values):
        real.labels("jsonrpc").observe(seconds)
        prom.push_latency.observe(("jsonrpc",), seconds)
        if n == 5:
            prom.flush()  # twice: the second adds only what came since the first
    prom.flush()

    def buckets(got, name):
        return {labels: v for (n, labels), v in got.items() if n.startswith(name)
                and not n.endswith("_created")}

    mine = buckets(samples(generate_latest(prom.registry)), "a2ui_push_latency_seconds")
    theirs = buckets(samples(generate_latest(reference)), "ref_seconds")
    assert mine == theirs and mine


def test_labels_stay_bounded_through_the_cache():
    for i in range(prom.MAX_LABELS + 3):
        prom.label(f"z{i}", kind="cache-test")
    assert prom.label("z0", kind="cache-test") == "z0"
    assert prom.label(f"z{prom.MAX_LABELS + 1}", kind="cache-test") == "other"
    assert prom.label("Not A Label", kind="cache-test") == "other"
    assert prom.label(["unhashable"], kind="cache-test") == "other"


def test_http_refusals_of_agui1_runs_and_v09_streams_are_counted(metrics_on, user, agent):
    from django.test import Client

    from a2ui import tokens

    client = Client()
    assert client.post("/api/v4/agui/run", "{}", content_type="application/json"
                       ).status_code == 401  # no credential
    bearer = tokens.issue_stream_token(user, agent, "stream_agui").token
    assert client.post("/api/v4/agui/run", "[1]", content_type="application/json",
                       HTTP_AUTHORIZATION=f"Bearer {bearer}").status_code == 400
    assert client.get(f"/api/v4/sessions/{uuid.uuid4()}/surfaces/stream").status_code == 401
    got = scrape()
    assert value(got, "a2ui_refused_inputs_total", protocol="agui1", reason="auth_failed") == 1
    assert value(got, "a2ui_refused_inputs_total", protocol="agui1", reason="invalid_input") == 1
    assert value(got, "a2ui_refused_inputs_total", protocol="v09.sse", reason="-32006") == 1
