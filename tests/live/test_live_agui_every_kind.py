"""Tier 2 (issue 24, item 2): a v0.9 surface reaches the seed-003 AG-UI socket and an AG-UI 1.0
run across two Daphne processes. The session is opened by a v0.9 socket on B (the surface store
still refuses surfaces in a session whose opener did not declare v0.9); the AG-UI socket and
the run join it on A; the agent pushes the surface through B."""

import pytest

from tests.live.aguihttp import post_run, run_input
from tests.live.client import Client, open_agent
from tests.live.test_live_agui import next_event, open_agui
from tests.live.test_live_mcp import issue
from tests.live.test_live_surfaces import CAPS
from tests.surfaces.helpers import booking, data

pytestmark = pytest.mark.django_db(transaction=True)
AGUI = "stream_agui"


async def test_a_v09_surface_reaches_the_agui_socket_and_run_on_another_process(
        two_servers, user, agent, agent_key):
    a, b = two_servers
    bot = await open_agent(b, agent_key)
    v09 = await Client.open(f"{b.ws_url}/ws/v09/a2ui?token={await issue(user, agent)}")
    await v09.send({"version": "v0.9", "capabilities": CAPS})
    sid = (await v09.recv())["session"]["sessionId"]

    token = await issue(user, agent, AGUI)
    person = await open_agui(a, token, sid)
    status = await next_event(person)
    assert status["status"] == "CONNECTED" and status["session_id"] == sid
    run = await post_run(a.url, run_input(thread_id=sid, messages=[]), token)
    assert run.status == 200
    assert [(await run.next())["type"] for _ in range(2)] == ["RUN_STARTED", "STATE_SNAPSHOT"]

    reply = await bot.call("a2ui.v09", {"session_id": sid, "messages": booking()}, "p")
    assert reply["result"]["seq"] == 3, reply
    assert "createSurface" in await v09.recv()
    shown = await next_event(person)
    assert shown["type"] == "RENDER_REQUEST" and shown["component_id"] == "a2ui-surface-s1"
    assert shown["schema"]["type"] == "a2ui-surface"
    assert operations(shown) == ["createSurface", "updateComponents", "updateDataModel"]
    snap = await run.next()
    assert snap["type"] == "ACTIVITY_SNAPSHOT" and snap["activityType"] == "a2ui-surface"
    assert snap["content"]["a2ui_operations"] == shown["schema"]["a2ui_operations"]

    await bot.call("a2ui.v09", {"session_id": sid, "messages": [data("s1", "/name", "Bo")]},
                   "q")
    more = await next_event(person)
    assert more["schema"]["append"] is True
    assert more["schema"]["a2ui_operations"][0]["updateDataModel"]["value"] == "Bo"
    assert (await run.next())["type"] == "ACTIVITY_DELTA"

    # A seed-003 socket resuming on A gets the surface whole.
    await person.close()
    person = await open_agui(a, await issue(user, agent, AGUI), sid)
    assert (await next_event(person))["status"] == "CONNECTED"
    whole = await next_event(person)
    assert whole["component_id"] == "a2ui-surface-s1" and "append" not in whole["schema"]
    assert whole["schema"]["a2ui_operations"][-1]["updateDataModel"]["value"] == {"name": "Bo"}
    await run.close()
    for client in (person, v09, bot):
        await client.close()


def operations(event):
    return [next(k for k in m if k != "version") for m in event["schema"]["a2ui_operations"]]
