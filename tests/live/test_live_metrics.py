"""Tier 2: the Prometheus metrics of two Daphne processes sharing one multiprocess directory
(``A2UI['PROMETHEUS_MULTIPROC_DIR']``; docs/operations.md "Metrics"): an agent on each process
pushes to a session of another protocol (AG-UI on one, the JSON-RPC socket on the other), and a
scrape of either process shows both processes' pushes, latency, sockets and sessions per
protocol (each process's tallies flushed into the directory within about a second)."""

import time
import urllib.request

import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests.live.client import init_session, open_agent, open_user
from tests.live.test_live_agui import next_event, open_agui
from tests.live.test_live_mcp import issue

pytestmark = pytest.mark.django_db(transaction=True)


def scrape(server):
    with urllib.request.urlopen(server.url + "/a2ui/metrics", timeout=10) as response:
        assert response.status == 200
        text = response.read().decode()
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for family in text_string_to_metric_families(text) for s in family.samples}


def value(got, name, **labels):
    return got.get((name, tuple(sorted(labels.items()))), 0)


async def test_two_processes_share_one_scrape(daphne_server, tmp_path, user, agent, agent_key):
    shared = str(tmp_path / "prom")
    a = daphne_server(A2UI_PROMETHEUS="1", A2UI_PROMETHEUS_MULTIPROC_DIR=shared)
    b = daphne_server(A2UI_PROMETHEUS="1", A2UI_PROMETHEUS_MULTIPROC_DIR=shared)
    bot_a, bot_b = await open_agent(a, agent_key), await open_agent(b, agent_key)
    agui = await open_agui(b, await issue(user, agent, "stream_agui"))
    agui_sid = (await next_event(agui))["session_id"]
    person = await open_user(a, await issue(user, agent, "stream_a2ui"))
    rpc_sid = await init_session(person)

    for n in range(3):  # agent on A -> the AG-UI session (B)
        reply = await bot_a.call("ui.render", {"session_id": agui_sid, "component_id": f"c{n}",
                                               "component_type": "card", "data": {"title": "x"}}, n + 1)
        assert reply.get("result", {}).get("clients") == {"agui": 1}, reply
    for n in range(2):  # agent on B -> the JSON-RPC session (A)
        reply = await bot_b.call("ui.render", {"session_id": rpc_sid, "component_id": f"d{n}",
                                               "component_type": "card", "data": {"title": "x"}}, n + 1)
        assert reply.get("result", {}).get("clients") == {"jsonrpc": 1}, reply

    # Each process's tallies reach the shared directory within about a second (prom.flush).
    deadline = time.monotonic() + 5
    while value(scrape(a), "a2ui_pushes_total", protocol="agui") < 3 \
            or value(scrape(b), "a2ui_pushes_total", protocol="jsonrpc") < 2:
        assert time.monotonic() < deadline, "a process's tallies never reached the scrape"
        time.sleep(0.1)
    time.sleep(1.5)  # and whatever else each hook added meanwhile
    for got in (scrape(a), scrape(b)):  # the same sums from either process
        assert value(got, "a2ui_sessions", protocol="agui") == 1
        assert value(got, "a2ui_sessions", protocol="jsonrpc") == 1
        assert value(got, "a2ui_pushes_total", protocol="agui") == 3
        assert value(got, "a2ui_pushes_total", protocol="jsonrpc") == 2
        assert value(got, "a2ui_push_latency_seconds_count", protocol="agui") == 3
        assert value(got, "a2ui_push_latency_seconds_count", protocol="jsonrpc") == 2
        assert value(got, "a2ui_push_latency_seconds_sum", protocol="agui") > 0
        assert value(got, "a2ui_sockets", protocol="v4.a2ui.agent") == 2
        assert value(got, "a2ui_sockets", protocol="agui") == 1
        assert value(got, "a2ui_sockets", protocol="v4.a2ui") == 1
    await agui.close()
    await person.close()
    await bot_a.close()
    await bot_b.close()
