"""An agent's open ``request_input`` / ``confirm`` as a resource of the person's session on
/mcp (issue 24, item 2), in-process with the official SDK's client (``ClientSession``, the
handshake era) against the ASGI app: the agent asks through the Python API
(``a2ui.agents``); the person's host, subscribed to the session, hears
``notifications/resources/list_changed``, finds the request in ``resources/list``, reads it
(JSON and the form), answers it with ``respond`` / ``approve``, and the agent's await returns
the answer. Bad answers are refused with -32602 before anything changes. (Across two Daphne
processes: tests/live/test_live_mcp_requests.py.)
"""

import asyncio
import json

import mcp_types as types
import pytest
from channels.db import database_sync_to_async
from mcp.shared.exceptions import MCPError

from a2ui import agents, tokens
from a2ui.models import PendingRequest
from tests.mcp.asgiclient import build_app, sdk_session
from tests.wsutil import connect_user, init_session, recv_until

pytestmark = pytest.mark.django_db(transaction=True)


async def _next(queue, pred, timeout=5):
    async def find():
        while True:
            message = await queue.get()
            if pred(message):
                return message
    return await asyncio.wait_for(find(), timeout)


def is_list_changed(message):
    return isinstance(message, types.ResourceListChangedNotification)


def is_updated(uri):
    return lambda m: isinstance(m, types.ResourceUpdatedNotification) and str(m.params.uri) == uri


async def _status(request_id):
    row = await database_sync_to_async(PendingRequest.objects.get)(request_id=request_id)
    return row.status


@pytest.fixture
def mcp_token(user, agent):
    return tokens.issue_stream_token(user, agent, "stream_mcp").token


async def test_a_subscribed_host_sees_reads_and_answers_request_input(
        stream_token, mcp_token, agent):
    person = await connect_user(stream_token)
    sid = await init_session(person)
    app, notes = build_app(), asyncio.Queue()

    async def on_message(message):
        if not isinstance(message, Exception):
            await notes.put(message)

    asking = None
    try:
        async with sdk_session(app, mcp_token, message_handler=on_message) as host:
            activity = f"a2ui://sessions/{sid}/activity"
            await host.subscribe_resource(activity)  # watches the session
            listed = {str(r.uri) for r in (await host.list_resources()).resources}
            assert activity in listed
            assert not any("/requests/" in uri for uri in listed)

            asking = asyncio.ensure_future(agents.arequest_input(
                agent, sid, "select", "Which city?", options=["Oslo", "Rome & <Ostia>"],
                request_id="r1"))
            await _next(notes, is_list_changed)
            resources = {str(r.uri): r for r in (await host.list_resources()).resources}
            uri, form = f"a2ui://sessions/{sid}/requests/r1", f"ui://sessions/{sid}/requests/r1"
            assert resources[uri].mime_type == "application/json"
            assert resources[form].mime_type == "text/html"
            assert "respond" in resources[uri].description
            await host.subscribe_resource(uri)

            read = json.loads((await host.read_resource(uri)).contents[0].text)
            assert read["kind"] == "input" and read["method"] == "ui.request_input"
            assert read["params"]["prompt"] == "Which city?"
            assert read["params"]["options"][0] == "Oslo"
            assert read["answer_with"]["tool"] == "respond"
            assert read["answer_with"]["arguments"]["request_id"] == "r1"
            page = (await host.read_resource(form)).contents[0].text
            assert "default-src 'none'" in page and "<Ostia>" not in page
            assert '<option value="Oslo">Oslo</option>' in page and "Which city?" in page
            assert '"request_id": "r1"' in page

            # Bad answers: refused with the protocol's errors, nothing changes.
            with pytest.raises(MCPError) as wrong_kind:  # approve answers confirms only
                await host.call_tool("approve", {"session_id": sid, "request_id": "r1",
                                                 "approved": True})
            assert wrong_kind.value.code == -32602
            assert wrong_kind.value.error.data["path"] == "arguments.request_id"
            with pytest.raises(MCPError) as no_value:
                await host.call_tool("respond", {"session_id": sid, "request_id": "r1"})
            assert no_value.value.error.data["path"] == "arguments.value"
            with pytest.raises(MCPError) as unknown:
                await host.call_tool("respond", {"session_id": sid, "request_id": "r9",
                                                 "value": "Oslo"})
            assert unknown.value.code == -32602
            with pytest.raises(MCPError) as not_bool:
                await host.call_tool("approve", {"session_id": sid, "request_id": "r1",
                                                 "approved": "yes"})
            assert not_bool.value.error.data["path"] == "arguments.approved"
            assert await _status("r1") == "pending" and not asking.done()

            answered = await host.call_tool("respond", {"session_id": sid, "request_id": "r1",
                                                        "value": "Rome"})
            assert not answered.is_error and answered.structured_content == {"ok": True}
            assert await asyncio.wait_for(asking, 5) == "Rome"
            await _next(notes, is_updated(uri))
            await _next(notes, is_list_changed)
            with pytest.raises(MCPError) as gone:
                await host.read_resource(uri)
            assert gone.value.code == -32002
            listed = {str(r.uri) for r in (await host.list_resources()).resources}
            assert uri not in listed and form not in listed
            with pytest.raises(MCPError) as again:  # answered once
                await host.call_tool("respond", {"session_id": sid, "request_id": "r1",
                                                 "value": "Oslo"})
            assert again.value.code == -32602
        # The web client saw the same request open and close.
        await recv_until(person, lambda m: m.get("method") == "a2ui.request_closed")
    finally:
        if asking is not None and not asking.done():
            asking.cancel()
        await app.runner.stop()
        await person.disconnect()


async def test_a_host_approves_a_confirm(stream_token, mcp_token, agent):
    person = await connect_user(stream_token)
    sid = await init_session(person)
    app, notes = build_app(), asyncio.Queue()

    async def on_message(message):
        if not isinstance(message, Exception):
            await notes.put(message)

    asking = None
    try:
        async with sdk_session(app, mcp_token, message_handler=on_message) as host:
            await host.subscribe_resource(f"ui://sessions/{sid}/client")
            asking = asyncio.ensure_future(agents.aconfirm(
                agent, sid, "Delete 3 files?", severity="critical", request_id="c1"))
            await _next(notes, is_list_changed)
            uri = f"a2ui://sessions/{sid}/requests/c1"
            read = json.loads((await host.read_resource(uri)).contents[0].text)
            assert read["kind"] == "confirm" and read["params"]["title"] == "Delete 3 files?"
            assert read["answer_with"]["tool"] == "approve"
            page = (await host.read_resource(f"ui://sessions/{sid}/requests/c1")).contents[0]
            assert 'data-a2ui-approve="yes"' in page.text
            with pytest.raises(MCPError) as wrong_kind:  # respond answers request_input only
                await host.call_tool("respond", {"session_id": sid, "request_id": "c1",
                                                 "value": True})
            assert wrong_kind.value.code == -32602
            assert await _status("c1") == "pending"
            await host.call_tool("approve", {"session_id": sid, "request_id": "c1",
                                             "approved": True, "reason": "fine"})
            assert await asyncio.wait_for(asking, 5) == {"approved": True, "reason": "fine"}
            await _next(notes, is_list_changed)
    finally:
        if asking is not None and not asking.done():
            asking.cancel()
        await app.runner.stop()
        await person.disconnect()


async def test_the_activity_resource_is_updated_by_activity_events(
        stream_token, mcp_token, agent):
    person = await connect_user(stream_token)
    sid = await init_session(person)
    app, notes = build_app(), asyncio.Queue()

    async def on_message(message):
        if not isinstance(message, Exception):
            await notes.put(message)

    try:
        async with sdk_session(app, mcp_token, message_handler=on_message) as host:
            uri = f"a2ui://sessions/{sid}/activity"
            await host.subscribe_resource(uri)
            await agents.aagui_event(agent, sid, {"type": "PLAN_CARD", "id": "p1",
                                                  "title": "Plan", "content": "- one",
                                                  "status": "ACTIVE"})
            await _next(notes, is_updated(uri))
            read = json.loads((await host.read_resource(uri)).contents[0].text)
            assert "Plan" in json.dumps(read["plans"])
    finally:
        await app.runner.stop()
        await person.disconnect()


# Sans-I/O: the URIs, the event mapping, the form --------------------------------------------

SID = "12345678-1234-5678-1234-56781234abcd"


def test_request_and_activity_uris_round_trip():
    import uuid

    from a2ui.mcp import uris

    sid = uuid.UUID(SID)
    for kind, expected in (("requests", f"a2ui://sessions/{SID}/requests/r%2F1"),
                           ("request_forms", f"ui://sessions/{SID}/requests/r%2F1"),
                           ("request_apps", f"ui://sessions/{SID}/request-apps/r%2F1")):
        assert uris.build(kind, sid, "r/1") == expected
        assert uris.parse(expected) == uris.Ref(kind, sid, "r/1")
    assert uris.parse(f"a2ui://sessions/{SID}/activity") == uris.Ref("activity", sid)
    assert uris.build("activity", sid) == f"a2ui://sessions/{SID}/activity"
    assert uris.Ref("requests", sid, "x").mime_type == "application/json"
    # The old ones are unchanged, and schemes do not mix.
    assert uris.parse(f"ui://sessions/{SID}/client") == uris.Ref("client", sid)
    for bad in (f"ui://sessions/{SID}/activity", f"a2ui://sessions/{SID}/request-apps/r",
                f"a2ui://sessions/{SID}/client", f"a2ui://sessions/{SID}/requests/",
                f"ui://sessions/{SID}/surfaces/s"):
        assert uris.parse(bad) is None, bad


def test_requests_open_and_close_change_the_list_and_their_uris():
    import uuid

    from a2ui.core import events
    from a2ui.mcp import changes, uris

    sid = uuid.UUID(SID)
    subscribed = {uris.build(k, sid, "r1") for k in ("requests", "request_forms",
                                                      "request_apps")}
    opened = events.to_message(events.Kind.REQUEST_OPENED, {
        "kind": "input", "params": {"request_id": "r1", "prompt": "?"}})
    closed = events.to_message(events.Kind.REQUEST_CLOSED, {"request_id": "r1",
                                                            "status": "answered"})
    for event in (opened, closed):
        updated, listed = changes.notices(sid, event, subscribed)
        assert listed and sorted(updated) == sorted(subscribed)
    assert changes.notices(sid, opened, set()) == ([], True)
    broken = events.to_message(events.Kind.REQUEST_OPENED, {"kind": "input", "params": None})
    assert changes.notices(sid, broken, subscribed) == ([], True)
    activity = uris.build("activity", sid)
    for kind in ("message", "message.batch", "tool_call", "state.delta", "plan", "resources",
                 "roster", "artifact"):
        event = events.to_message(kind, {})
        assert changes.notices(sid, event, {activity}) == ([activity], False), kind
    for kind in ("progress", "notify", "navigate", "consent.required", "run.ended"):
        assert changes.notices(sid, events.to_message(kind, {}), {activity}) == ([], False)


def test_request_forms_escape_and_answer_with_the_right_tool():
    from a2ui.mcp import render

    page = render.request_document(SID, {"kind": "input", "params": {
        "request_id": "r1", "input_type": "text", "prompt": "Name <please>",
        "validation": {"min": 2, "max": 20, "pattern": "[a-z]+", "required": True}}})
    assert "Name &lt;please&gt;" in page and "<please>" not in page
    assert 'minlength="2" maxlength="20" pattern="[a-z]+" required' in page
    assert '"fields": [{"name": "value", "type": "text"}]' in page
    assert f"script-src '{render.SCRIPT_HASH}'" in page
    number = render.request_document(SID, {"kind": "input", "params": {
        "request_id": "r2", "input_type": "number", "prompt": "?",
        "validation": {"min": 1, "pattern": "x"}}})
    assert 'type="number" id="a2ui-value" name="value" min="1">' in number
    upload = render.request_document(SID, {"kind": "input", "params": {
        "request_id": "r3", "input_type": "file", "prompt": "A file"}})
    assert "<form>" not in upload and "respond" in upload and '"fields": []' in upload
    confirm = render.request_document(SID, {"kind": "confirm", "params": {
        "request_id": "c1", "title": "Delete <all>?", "severity": "critical"}}, "mcp-app")
    assert "Delete &lt;all&gt;?" in confirm and "a2ui-alert-error" in confirm
    assert '"mode": "mcp-app"' in confirm and 'data-a2ui-approve="no"' in confirm
    assert "send('approve', args)" in render.SCRIPT
