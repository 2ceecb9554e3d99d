"""Shared pieces of the v0.9 surface tests."""

import json

from channels.testing import WebsocketCommunicator

from a2ui.core.surfaces import BASIC_CATALOG_ID
from a2ui_project.asgi import application
from tests.wsutil import connect_user, init_session, recv, recv_until, send

V = "v0.9"
V09_CAPS = {"v0.9": {"supportedCatalogIds": [BASIC_CATALOG_ID]}}


def create(sid="s1", catalog=BASIC_CATALOG_ID, **extra):
    return {"version": V, "createSurface": {"surfaceId": sid, "catalogId": catalog, **extra}}


def components(sid, *comps):
    return {"version": V, "updateComponents": {"surfaceId": sid, "components": list(comps)}}


def data(sid, path="/", value=None, *, delete=False):
    body = {"surfaceId": sid, "path": path}
    if not delete:
        body["value"] = value
    return {"version": V, "updateDataModel": body}


def delete(sid):
    return {"version": V, "deleteSurface": {"surfaceId": sid}}


def text(cid, value):
    return {"id": cid, "component": "Text", "text": value}


def booking(sid="s1", **create_extra):
    """A small form: root Card -> Column -> [title, name field, button(label)]."""
    return [
        create(sid, **create_extra),
        components(sid,
                   {"id": "root", "component": "Card", "child": "col"},
                   {"id": "col", "component": "Column", "children": ["title", "name", "book"]},
                   text("title", "Book a table"),
                   {"id": "name", "component": "TextField", "label": "Name",
                    "value": {"path": "/name"}},
                   {"id": "book", "component": "Button", "child": "book_label",
                    "action": {"event": {"name": "book",
                                         "context": {"name": {"path": "/name"}}}}},
                   text("book_label", "Book")),
        data(sid, "/", {"name": "Ada"}),
    ]


def action(sid="s1", source="book", name="book", context=None):
    return {"version": V, "action": {
        "name": name, "surfaceId": sid, "sourceComponentId": source,
        "timestamp": "2026-01-01T12:00:00Z", "context": context or {"name": "Ada"}}}


def rpc(method, params, rpc_id=None):
    msg = {"jsonrpc": "2.0", "method": method, "params": params}
    if rpc_id is not None:
        msg["id"] = rpc_id
    return msg


async def v09_user(token, capabilities=V09_CAPS):
    """A JSON-RPC user socket that declared v0.9; returns (communicator, session id)."""
    comm = await connect_user(token)
    sid = await init_session(comm, capabilities=capabilities)
    return comm, sid


async def agent_call(agent, method, params, rpc_id="x"):
    await send(agent, rpc(method, params, rpc_id))
    return await recv_until(agent, lambda m: m.get("id") == rpc_id and "method" not in m)


async def push(agent, sid, messages, rpc_id="p"):
    return await agent_call(agent, "a2ui.v09", {"session_id": sid, "messages": messages}, rpc_id)


async def v09_socket(token, session_id=None, capabilities=V09_CAPS, handshake=True):
    path = f"/ws/v09/a2ui?token={token}"
    if session_id:
        path += f"&session_id={session_id}"
    comm = WebsocketCommunicator(application, path)
    connected, _ = await comm.connect()
    assert connected
    if not handshake:
        return comm, None
    await comm.send_to(text_data=json.dumps({"version": V, "capabilities": capabilities}))
    hello = await recv(comm)
    assert "session" in hello, hello
    return comm, hello["session"]["sessionId"]


async def frames(comm, n, timeout=3):
    return [await recv(comm, timeout) for _ in range(n)]


def is_v09(msg):
    return msg.get("method") == "a2ui.v09"
