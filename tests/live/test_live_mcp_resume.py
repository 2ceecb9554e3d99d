"""Tier 2: /mcp's SSE streams are resumable (a2ui.mcp.eventstore, Redis): a 2025-11-25 POST
stream opens with a priming event (id, empty data, retry); a GET with Last-Event-ID replays
what followed; when Redis lost the events the loss is detected (nothing replayed, no 500)."""

import json

import httpx2
import pytest

from tests.live.conftest import _redis
from tests.live.mcpclient import INIT_BODY, MCP_HEADERS

pytestmark = pytest.mark.django_db(transaction=True)


def _events(text):
    out = []
    for block in text.replace("\r\n", "\n").split("\n\n"):
        fields = {}
        for line in block.split("\n"):
            name, _, value = line.partition(":")
            if name in ("id", "data", "retry", "event"):
                fields[name] = value[1:] if value.startswith(" ") else value
        if fields:
            out.append(fields)
    return out


async def test_post_stream_primed_and_replayed_after_last_event_id(
        daphne_server, live_services, agent_key):
    server = daphne_server()
    url = f"{server.url}/mcp"
    headers = {**MCP_HEADERS, "Authorization": f"Bearer {agent_key}"}
    async with httpx2.AsyncClient(timeout=15) as http:
        init = await http.post(url, headers=headers, json=INIT_BODY)
        sid = init.headers["mcp-session-id"]
        headers.update({"Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-11-25"})
        await http.post(url, headers=headers,
                        json={"jsonrpc": "2.0", "method": "notifications/initialized"})
        call = await http.post(url, headers=headers, json={
            "jsonrpc": "2.0", "id": 2, "method": "tools/call",
            "params": {"name": "list_sessions", "arguments": {}}})
        assert call.headers["content-type"].startswith("text/event-stream")
        events = _events(call.text)
        priming, answer = events[0], events[-1]
        assert priming["id"] and priming.get("data", "") == "" and priming["retry"] == "1000"
        assert json.loads(answer["data"])["id"] == 2 and answer["id"]

        get = {**headers, "Accept": "text/event-stream"}
        # The replayed stream stays open (the SDK tails it): read up to the answer.
        async with http.stream("GET", url,
                               headers={**get, "Last-Event-ID": priming["id"]}) as replay:
            assert replay.status_code == 200
            text = ""
            async for chunk in replay.aiter_text():
                text += chunk
                if any(e.get("data") for e in _events(text)):
                    break
        replayed = [e for e in _events(text) if e.get("data")]
        assert json.loads(replayed[0]["data"])["id"] == 2
        assert replayed[0]["id"] == answer["id"]

        # Another session's Last-Event-ID finds nothing of this one.
        other = await http.post(url, headers={**MCP_HEADERS,
                                              "Authorization": f"Bearer {agent_key}"},
                                json=INIT_BODY)
        foreign = {**get, "Mcp-Session-Id": other.headers["mcp-session-id"],
                   "Last-Event-ID": priming["id"]}
        stolen = await http.get(url, headers=foreign)
        assert stolen.status_code < 500 and not [e for e in _events(stolen.text)
                                                 if e.get("data")]

        # Redis lost the events: detected, nothing replayed, never a 500.
        client = _redis(live_services)
        keys = client.keys(f"a2ui:mcp:sse:{sid}:*")
        assert keys
        client.delete(*keys)
        client.close()
        lost = await http.get(url, headers={**get, "Last-Event-ID": priming["id"]})
        assert lost.status_code == 200 and not [e for e in _events(lost.text) if e.get("data")]
        bogus = await http.get(url, headers={**get, "Last-Event-ID": "\x7f" * 10})
        assert bogus.status_code < 500
