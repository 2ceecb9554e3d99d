"""Issue 23, item 2: numbers the client draws are refused at the edge, before any state.

The reported chart (a pie of ``[1e308, -1e308, null]``) froze the person's tab on every reload
because it was stored and replayed. Over the agent socket it is -32602 naming the value, and
nothing is stored or pushed; an update that would grow a chart past its bounds leaves the
stored one as it was; a v0.9 Slider or weight at the end of the double range is
VALIDATION_FAILED with nothing stored. The rule itself is tests/protocol/test_proto_drawn.py.
"""

import pytest
from channels.db import database_sync_to_async

from a2ui.core.content import drawn
from a2ui.models import RenderedComponent, Surface
from tests.surfaces.helpers import create, push, v09_user
from tests.wsutil import connect_agent, connect_user, init_session, recv_until, send

pytestmark = pytest.mark.django_db(transaction=True)

PIE = {"chart_type": "pie", "series": [{"name": "s", "data": [1e308, -1e308, None]}]}


@database_sync_to_async
def _stored(sid):
    return {c.component_id: c.data for c in RenderedComponent.objects.filter(session_id=sid)}


async def _call(agent, rpc_id, method, params):
    await send(agent, {"jsonrpc": "2.0", "id": rpc_id, "method": method, "params": params})
    return await recv_until(agent, lambda m: m.get("id") == rpc_id)


async def test_the_reported_chart_is_refused_and_nothing_is_stored(stream_token, agent_key):
    agent = await connect_agent(agent_key)
    user = await connect_user(stream_token)
    sid = await init_session(user)
    reply = await _call(agent, 1, "ui.render", {"session_id": sid, "component_id": "pie",
                                                "component_type": "chart", "data": PIE})
    assert reply["error"]["code"] == -32602, reply
    assert reply["error"]["data"]["path"] == "params.data.series[0].data[0]"
    assert await _stored(sid) == {}
    assert user.output_queue.empty()  # nothing was pushed to the person

    points = [1] * drawn.MAX_CHART_POINTS
    good = {"chart_type": "line", "series": [{"name": "s", "data": points}]}
    reply = await _call(agent, 2, "ui.render", {"session_id": sid, "component_id": "line",
                                                "component_type": "chart", "data": good})
    assert "result" in reply, reply
    await recv_until(user, lambda m: m.get("method") == "ui.render")
    reply = await _call(agent, 3, "ui.update", {"session_id": sid, "component_id": "line",
                                                "operation": "append",
                                                "data": {"series": [{"name": "t", "data": [-1e308]}]}})
    assert reply["error"]["code"] == -32602, reply
    assert reply["error"]["data"]["path"] == "params.data.series[1].data[0]"
    assert (await _stored(sid))["line"]["series"] == good["series"]
    assert user.output_queue.empty()
    await user.disconnect()
    await agent.disconnect()


@pytest.mark.parametrize("component, path", [
    ({"id": "root", "component": "Slider", "min": 0, "max": 1e308, "value": 1},
     "/updateComponents/components/0/max"),
    ({"id": "root", "component": "Text", "text": "hi", "weight": -1e308},
     "/updateComponents/components/0/weight"),
])
async def test_v09_drawn_numbers_refused_nothing_stored(component, path, stream_token, agent_key):
    user, sid = await v09_user(stream_token)
    agent = await connect_agent(agent_key)
    # The person is told the agent came online (a2ui.sessions.presence); nothing else after.
    await recv_until(user, lambda m: m.get("method") == "a2ui.agent_status")
    messages = [create("s1"), {"version": "v0.9", "updateComponents": {
        "surfaceId": "s1", "components": [component]}}]
    reply = await push(agent, sid, messages)
    assert reply["error"]["code"] == -32602, reply
    assert reply["error"]["data"]["error"]["code"] == "VALIDATION_FAILED"
    assert reply["error"]["data"]["error"]["path"] == path
    assert not await database_sync_to_async(Surface.objects.filter(session_id=sid).exists)()
    assert user.output_queue.empty()
    await user.disconnect()
    await agent.disconnect()
