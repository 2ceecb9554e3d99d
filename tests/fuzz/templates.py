"""Valid messages of each endpoint: the grammar the fuzzer mutates."""

import copy
import json

from a2ui.core.surfaces import BASIC_CATALOG_ID

V09_CAPS = {"v0.9": {"supportedCatalogIds": [BASIC_CATALOG_ID]}}
COMPONENTS = {
    "card": {"title": "Agent Summary", "description": "Last 7 days.",
             "sections": [{"label": "Total Calls", "value": "1,247"}],
             "actions": [{"label": "View", "action": "navigate", "url": "https://example.com/a"}]},
    "table": {"headers": [{"key": "name", "label": "Agent", "sortable": True}],
              "rows": [{"name": "WeatherBot"}]},
    "form": {"fields": [{"name": "q", "type": "text", "label": "Query", "required": True},
                        {"name": "n", "type": "number", "label": "Max", "min": 0, "max": 1000}],
             "submit_label": "Search"},
    "chart": {"chart_type": "bar", "title": "Usage", "x_axis": {"label": "Day",
              "values": ["Mon", "Tue"]}, "series": [{"name": "ok", "data": [1, 2]}]},
    "markdown": {"content": "## Report\n\n[docs](https://example.com/d) **bold**"},
    "code": {"language": "python", "code": "print(1)", "title": "Example"},
    "image": {"url": "https://cdn.example.com/c.png", "alt": "chart", "width": 800,
              "height": 400},
    "alert": {"severity": "warning", "title": "Budget", "message": "80% used",
              "dismissible": True},
    "steps": {"steps": [{"label": "Collect", "status": "completed"},
                        {"label": "Analyse", "status": "active"}], "current_step": 1},
}


#: A pie: its slices must not be negative; with a numeric x axis.
PIE = {"chart_type": "pie", "x_axis": {"values": [2024, 2025]},
       "series": [{"name": "share", "data": [60, 40.5]}]}


def rpc(method, params, rpc_id=7):
    msg = {"jsonrpc": "2.0", "method": method, "params": params}
    if rpc_id is not None:
        msg["id"] = rpc_id
    return msg


def agent_messages(sid):
    """What an agent sends on /ws/v4/a2ui/agent (and, without awaiting ones, over REST)."""
    out = [rpc("ui.render", {"session_id": sid, "component_id": f"c-{kind}",
                             "component_type": kind, "data": data,
                             "metadata": {"priority": "high", "ttl_seconds": 300,
                                          "position": "main"}})
           for kind, data in COMPONENTS.items()]
    out += [
        rpc("ui.render", {"session_id": sid, "component_id": "c-pie", "component_type": "chart",
                          "data": PIE}),
        rpc("ui.update", {"session_id": sid, "component_id": "c-card", "operation": "merge",
                          "data": {"title": "New"}}),
        rpc("ui.update", {"session_id": sid, "component_id": "c-table", "operation": "append",
                          "data": {"rows": [{"name": "x"}]}}),
        rpc("ui.request_input", {"session_id": sid, "request_id": "in-1", "input_type": "select",
                                 "prompt": "Price?", "options": ["$10", "$20"],
                                 "validation": {"min": 1, "max": 10, "required": True}}, None),
        rpc("ui.confirm", {"session_id": sid, "request_id": "cf-1", "title": "Buy?",
                           "description": "Charges $5.", "severity": "warning",
                           "timeout_seconds": 30}, None),
        rpc("ui.progress", {"session_id": sid, "task_id": "t1", "progress_type": "determinate",
                            "value": 45, "total": 100, "message": "Step 3"}),
        rpc("ui.navigate", {"session_id": sid, "url": "https://example.com/r", "new_tab": False}),
        rpc("ui.notify", {"session_id": sid, "level": "info", "title": "Done",
                          "message": "Report ready.", "duration_ms": 5000}),
        rpc("a2ui.sessions", {}),
        rpc("a2ui.v09", {"session_id": sid, "messages": surface_batch("fz")}),
    ]
    return out


def user_messages():
    """What a person's client sends on /ws/v4/a2ui once initialized."""
    return [
        rpc("user.respond", {"request_id": "req-1", "value": "blue"}),
        rpc("user.respond", {"request_id": "form-1", "value": {"q": "x", "n": 3}}),
        rpc("user.approve", {"request_id": "conf-1", "approved": True, "reason": "ok"}),
        rpc("user.cancel", {"task_id": "t1", "reason": "stop"}),
        rpc("user.consent", {"consent_type": "data_collection", "granted": True}),
        rpc("user.action", {"action_type": "artifact_edit", "component_id": "f1",
                            "payload": {"content": "x = 1\n", "base_length": 6}}),
        rpc("a2ui.v09", {"messages": [v09_action()], "dataModel": {
            "version": "v0.9", "surfaces": {"s1": {"name": "Ada"}}}}),
        init_message(),
        rpc("ui.render", {"component_id": "x", "component_type": "card", "data": {}}),
    ]


def init_message(**params):
    return rpc("a2ui.init", {
        "client_info": {"name": "WebUI", "version": "1.0", "build": 7,
                        "viewport": {"width": 1920, "height": 1080}},
        "capabilities": {"supported_components": ["card", "table", "form", "markdown"],
                         "max_concurrent_components": 20, "supports_file_upload": True,
                         **V09_CAPS},
        **params,
    }, "init")


def surface_batch(sid="s1"):
    v = "v0.9"
    return [
        {"version": v, "createSurface": {"surfaceId": sid, "catalogId": BASIC_CATALOG_ID,
                                         "sendDataModel": True}},
        {"version": v, "updateComponents": {"surfaceId": sid, "components": [
            {"id": "root", "component": "Card", "child": "col"},
            {"id": "col", "component": "Column",
             "children": ["title", "img", "name", "guests", "count", "book"]},
            {"id": "title", "component": "Text", "text": "Book a table", "weight": 1},
            {"id": "img", "component": "Image", "url": "https://example.com/i.png"},
            {"id": "name", "component": "TextField", "label": "Name",
             "value": {"path": "/name"}},
            {"id": "guests", "component": "Slider", "label": "Guests", "min": 1, "max": 12,
             "value": 2},
            {"id": "count", "component": "Text", "text": {
                "call": "formatNumber", "args": {"value": {"path": "/n"}, "decimals": 0},
                "returnType": "string"}},
            {"id": "book", "component": "Button", "child": "book_label",
             "action": {"event": {"name": "book", "context": {"name": {"path": "/name"}}}}},
            {"id": "book_label", "component": "Text", "text": "Book"}]}},
        {"version": v, "updateDataModel": {"surfaceId": sid, "path": "/",
                                           "value": {"name": "Ada", "n": 1}}},
    ]


def v09_action(sid="s1"):
    return {"version": "v0.9", "action": {
        "name": "book", "surfaceId": sid, "sourceComponentId": "book",
        "timestamp": "2026-01-01T12:00:00Z", "context": {"name": "Ada"}}}


def v09_client_messages():
    """What a client sends on /ws/v09/a2ui once its capabilities went out."""
    return [
        v09_action(),
        {"version": "v0.9", "error": {"code": "VALIDATION_FAILED", "surfaceId": "s1",
                                      "path": "/components/0", "message": "bad"}},
        {**v09_action(), "metadata": {"a2uiClientDataModel": {
            "version": "v0.9", "surfaces": {"s1": {"name": "Bo"}}}}},
        {"version": "v0.9", "capabilities": V09_CAPS},
    ]


def v09_handshake():
    return {"version": "v0.9", "capabilities": V09_CAPS}


def known_agent_killers(sid):
    """Inputs issue 10 found crashing or lying: sent first, every run, whatever the seed."""
    image = dict(COMPONENTS["image"], url="http://[x")
    card = json.loads(json.dumps(COMPONENTS["card"]))
    card["actions"][0]["url"] = "http://[::1"
    return [
        rpc("ui.navigate", {"session_id": sid, "url": "http://[x"}),
        rpc("ui.navigate", {"session_id": sid, "url": "http://[::1"}),
        rpc("ui.render", {"session_id": sid, "component_id": "k1", "component_type": "image",
                          "data": image}),
        rpc("ui.render", {"session_id": sid, "component_id": "k2", "component_type": "card",
                          "data": card}),
        rpc("ui.render", {"session_id": sid, "component_id": "k3", "component_type": "markdown",
                          "data": {"content": "[x](http://[x)"}}),
        rpc("ui.notify", {"session_id": sid, "level": "info", "title": "t", "duration_ms": 10**30}),
        rpc("a2ui.v09", {"session_id": sid, "messages": [
            *surface_batch("k4")[:2],
            {"version": "v0.9", "updateDataModel": {"surfaceId": "k4", "path": "/n",
                                                    "value": 10**30}}]}),
        rpc("ui.notify", {"session_id": "\ud800", "level": "info", "title": "t"}),
        # the id of a request that opens a prompt is stored with it (jsonb: no NUL)
        rpc("ui.confirm", {"session_id": sid, "request_id": "k5", "title": "t"}, rpc_id="a\x00b"),
        rpc("ui.request_input", {"session_id": sid, "request_id": "k6", "input_type": "text",
                                 "prompt": "p"}, rpc_id="\x00"),
    ]


def known_user_killers():
    return [
        rpc("user.respond", {"request_id": "req-1", "value": 10**30}),
        rpc("user.respond", {"request_id": "req-1", "value": "\x00\ud800"}),
        rpc("a2ui.v09", {"messages": [v09_action()], "dataModel": {
            "version": "v0.9", "surfaces": {"s1": {"name": 2**64}}}}),
    ]


def agui_frame(event):
    """A seed-003 client frame (``/ws/agui``) around ``event``."""
    return {"version": "0.1.0", "id": "6f1c2a3e-8a4b-4c5d-9e6f-7a8b9c0d1e2f",
            "timestamp": "2026-01-01T00:00:00Z", "event": event}


def agui_client_messages():
    """What a person's AG-UI client sends: text, answers to what ``_agent_setup`` opened,
    consent, cancel, a custom action."""
    return [agui_frame(e) for e in [
        {"type": "TEXT_MESSAGE", "sender": "user_1", "content": "Hello",
         "metadata": {"author_name": "Ann"}},
        {"type": "USER_ACTION", "action_type": "respond", "component_id": "req-2",
         "payload": {"value": "blue"}},
        {"type": "USER_ACTION", "action_type": "confirm", "component_id": "conf-1",
         "payload": {"approved": True, "reason": "ok"}},
        {"type": "USER_ACTION", "action_type": "submit", "component_id": "form-1",
         "payload": {"name": "Ann"}},
        {"type": "USER_ACTION", "action_type": "consent",
         "payload": {"consent_type": "ui_interaction", "granted": True}},
        {"type": "USER_ACTION", "action_type": "cancel", "component_id": "t1",
         "payload": {"reason": "later"}},
        {"type": "USER_ACTION", "action_type": "select", "component_id": "list-1",
         "payload": {"item": 3}},
    ]]


def agui_agent_events():
    """The seed-003 events an agent pushes (agent socket ``agui.event``, REST ``/agui``)."""
    from tests.activityops import AGUI_EVENTS

    return copy.deepcopy(AGUI_EVENTS)


def run_messages(sid, run_id="run-1"):
    """An agent's end of an AG-UI 1.0 run on its socket (``agui.run_*``)."""
    return [rpc("agui.run_finish", {"session_id": sid, "run_id": run_id,
                                    "result": {"answer": "done", "items": [1, 2]}}),
            rpc("agui.run_error", {"session_id": sid, "run_id": run_id,
                                   "message": "The tool failed.", "code": "tool_failed"})]
