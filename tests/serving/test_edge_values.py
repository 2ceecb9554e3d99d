"""Issue 10: hostile JSON values and URLs get their error at the edge, before any state changes.

One test per reported case on the sockets and over REST, plus a quick seeded loop of hostile
REST bodies (the permanent fuzz tier is tests/fuzz/).
"""

import json
import random

import pytest
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator
from rest_framework.test import APIClient

from a2ui.models import A2UISessionLog, PendingRequest, Surface
from a2ui_project.asgi import application
from tests.surfaces.helpers import V09_CAPS, booking, create, data
from tests.wsutil import INIT, connect_agent, connect_user, init_session, recv, recv_until, send

pytestmark = pytest.mark.django_db(transaction=True)

BIG = 10**30


def _encodable(reply):
    json.dumps(reply, ensure_ascii=False).encode("utf-8")
    return reply


async def _raw(comm, text):
    await comm.send_to(text_data=text)
    return _encodable(await recv(comm))


@database_sync_to_async
def _pending_status(sid, request_id):
    return PendingRequest.objects.get(session_id=sid, request_id=request_id).status


async def test_user_respond_out_of_range_refused_before_answered(stream_token, agent_key):
    agent = await connect_agent(agent_key)
    user = await connect_user(stream_token)
    sid = await init_session(user)
    await send(agent, {"jsonrpc": "2.0", "id": 7, "method": "ui.request_input", "params": {
        "session_id": sid, "request_id": "r1", "input_type": "text", "prompt": "?"}})
    await recv_until(user, lambda m: m.get("method") == "ui.request_input")
    reply = await _raw(user, '{"jsonrpc":"2.0","id":"a","method":"user.respond","params":'
                             f'{{"request_id":"r1","value":{BIG}}}}}')
    assert reply["id"] == "a" and reply["error"]["code"] == -32602, reply
    assert reply["error"]["data"]["path"] == "params.value"
    assert await _pending_status(sid, "r1") == PendingRequest.Status.PENDING
    # the person can still answer, and the agent gets that answer
    await send(user, {"jsonrpc": "2.0", "id": "b", "method": "user.respond",
                      "params": {"request_id": "r1", "value": 2**53 - 1}})
    answer = await recv_until(agent, lambda m: m.get("id") == 7)
    assert answer["result"] == 2**53 - 1
    await user.disconnect()
    await agent.disconnect()


async def test_init_build_out_of_range_refused_socket_lives(stream_token, agent_key):
    agent = await connect_agent(agent_key)
    user = await connect_user(stream_token)
    frame = json.loads(json.dumps(INIT))
    frame["params"]["client_info"]["build"] = 10**20
    reply = await _raw(user, json.dumps(frame))
    assert reply["id"] == "1" and reply["error"]["code"] == -32602, reply
    assert reply["error"]["data"]["path"] == "params.client_info.build"
    assert await database_sync_to_async(A2UISessionLog.objects.count)() == 0
    sid = await init_session(user)  # no 1011: the same socket opens its session
    opened = await recv_until(agent, lambda m: m.get("method") == "session.opened")
    assert opened["params"]["session_id"] == sid
    await user.disconnect()
    await agent.disconnect()


@pytest.mark.parametrize("side", ["user", "agent"])
async def test_lone_surrogates_answered_with_encodable_errors(side, stream_token, agent_key):
    comm = await (connect_user(stream_token) if side == "user" else connect_agent(agent_key))
    for text, rid, path in [
        ('{"jsonrpc":"1.0","id":"\\ud800"}', None, "id"),
        ('{"jsonrpc":"2.0","id":1,"method":"x\\ud800"}', 1, "method"),
        ('{"jsonrpc":"2.0","id":2,"method":"ui.render","params":{"session_id":"\\ud800"}}', 2,
         "params.session_id"),
        ('{"jsonrpc":"2.0","id":3,"method":"ui.notify","params":{"\\udc00":1}}', 3,
         "params.\ufffd"),
    ]:
        reply = await _raw(comm, text)
        assert reply["id"] == rid and reply["error"]["code"] == -32602, reply
        assert reply["error"]["data"]["path"] == path
    if side == "user":
        await init_session(comm)  # the socket still answers (no 1011)
    else:
        await send(comm, {"jsonrpc": "2.0", "id": "ok", "method": "a2ui.sessions", "params": {}})
        assert "result" in await recv(comm)
    await comm.disconnect()


@pytest.mark.parametrize("url", ["http://[x", "http://[::1"])
async def test_bracketed_hosts_on_agent_socket(url, stream_token, agent_key):
    user = await connect_user(stream_token)
    sid = await init_session(user)
    agent = await connect_agent(agent_key)
    for i, (method, params) in enumerate([
        ("ui.navigate", {"url": url}),
        ("ui.render", {"component_id": "i", "component_type": "image", "data": {"url": url}}),
        ("ui.render", {"component_id": "c", "component_type": "card", "data": {
            "title": "t", "actions": [{"label": "go", "action": "navigate", "url": url}]}}),
    ]):
        await send(agent, {"jsonrpc": "2.0", "id": i, "method": method,
                           "params": {"session_id": sid, **params}})
        reply = await recv_until(agent, lambda m, i=i: m.get("id") == i)
        assert reply["error"]["code"] == -32602, reply
        assert reply["error"]["data"]["path"].endswith("url")
    await send(agent, {"jsonrpc": "2.0", "id": "md", "method": "ui.render", "params": {
        "session_id": sid, "component_id": "m", "component_type": "markdown",
        "data": {"content": f"[x]({url}) and [y](javascript:alert(1))"}}})
    assert "result" in await recv_until(agent, lambda m: m.get("id") == "md")
    shown = await recv_until(user, lambda m: m.get("method") == "ui.render")
    assert shown["params"]["data"]["content"] == "[x](#) and [y](#)"
    await user.disconnect()
    await agent.disconnect()


async def test_bidi_controls_removed_before_the_person_sees_them(stream_token, agent_key):
    user = await connect_user(stream_token)
    sid = await init_session(user)
    agent = await connect_agent(agent_key)
    await send(agent, {"jsonrpc": "2.0", "id": 1, "method": "ui.render", "params": {
        "session_id": sid, "component_id": "c", "component_type": "card",
        "data": {"title": "Invoice(1)\u202etrela:tpircsavaj exe.png"}}})
    shown = await recv_until(user, lambda m: m.get("method") == "ui.render")
    assert shown["params"]["data"]["title"] == "Invoice(1)trela:tpircsavaj exe.png"
    await user.disconnect()
    await agent.disconnect()


async def test_v09_socket_refuses_values_before_the_handshake(stream_token):
    comm = WebsocketCommunicator(application, f"/ws/v09/a2ui?token={stream_token}")
    assert (await comm.connect())[0]
    bad = '{"version":"v0.9","capabilities":' + json.dumps(V09_CAPS) + f',"n":{BIG}}}'
    reply = await _raw(comm, bad)
    assert reply["error"]["rpcCode"] == -32602 and reply["error"]["data"]["path"] == "/n", reply
    reply = await _raw(comm, '{"version":"v0.9","x":"\\ud800"}')
    assert reply["error"]["rpcCode"] == -32602 and reply["error"]["data"]["path"] == "/x"
    assert await database_sync_to_async(A2UISessionLog.objects.count)() == 0
    await comm.send_to(text_data=json.dumps({"version": "v0.9", "capabilities": V09_CAPS}))
    assert "session" in await recv(comm)
    await comm.disconnect()


# REST -------------------------------------------------------------------------------------------




def _client(agent_key):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {agent_key}")
    return client


def _post(client, url, text):
    return client.post(url, text.encode("utf-8"), content_type="application/json")


def test_rest_surfaces_out_of_range_refused_before_storing(agent_key, session):
    url = f"/api/v4/sessions/{session.session_id}/surfaces"
    body = json.dumps(booking() + [data("s1", "/n", 1)]).replace('"/n", "value": 1',
                                                                 f'"/n", "value": {BIG}')
    response = _post(_client(agent_key), url, body)
    assert response.status_code == 422, response.content
    assert response.json()["index"] == 3
    assert response.json()["error"]["path"] == "/updateDataModel/value"
    assert response.json()["error"]["code"] == "VALIDATION_FAILED"
    session.refresh_from_db()
    assert session.surface_seq == 0 and not Surface.objects.exists()
    response = _post(_client(agent_key), url, json.dumps([create("s2"),
                                                          data("s2", "/", "\ud800")]))
    assert response.status_code == 422 and response.json()["index"] == 1
    assert not Surface.objects.exists()


def test_rest_surfaces_nul_in_identifiers_refused(agent_key, session):
    """NUL never reaches PostgreSQL, and is not stripped from ids (that would change them)."""
    url = f"/api/v4/sessions/{session.session_id}/surfaces"
    for batch, index, path in [
        ([create("a\x00b")], 0, "/createSurface/surfaceId"),
        ([create("s1"), {"version": "v0.9", "updateComponents": {"surfaceId": "s1", "components": [
            {"id": "root\x00", "component": "Text", "text": "t"}]}}], 1,
         "/updateComponents/components/0/id"),
    ]:
        response = _post(_client(agent_key), url, json.dumps(batch))
        assert response.status_code == 422, response.content
        assert response.json()["index"] == index
        assert response.json()["error"]["path"] == path
    session.refresh_from_db()
    assert session.surface_seq == 0 and not Surface.objects.exists()


def test_rest_messages_hostile_strings_and_urls_are_4xx(agent_key, session):
    client, url = _client(agent_key), f"/api/v4/sessions/{session.session_id}/messages"
    for body, path in [
        ('{"jsonrpc":"2.0","method":"x\\ud800","params":{}}', "method"),
        ('[{"jsonrpc":"2.0","method":"ui.notify","params":{"title":"a"}},'
         '{"jsonrpc":"2.0","method":"ui.notify","params":{"n":' + str(BIG) + '}}]',
         "[1].params.n"),
        ('{"jsonrpc":"2.0","method":"ui.navigate","params":{"url":"http://[x"}}', "params.url"),
    ]:
        response = _post(client, url, body)
        assert response.status_code == 400, (body, response.content)
        _encodable(response.json())
        assert response.json()["error"]["code"] == -32602
        assert response.json()["error"]["data"]["path"] == path


COMPONENTS = ['"Image"', '"Text"']


def _key(rng):
    return rng.choice(['"k"', '"\\ud800"', '"k\\u0000"', '"url"', '"\\u202e"'])


def _hostile_value(rng, depth=0):
    choice = rng.randrange(14 if depth < 3 else 10)
    return [
        lambda: str(10 ** rng.randrange(15, 40) * rng.choice([1, -1])),
        lambda: rng.choice(["1e400", "-1e999"]),
        lambda: '"' + rng.choice(["\\ud800", "a\\udfff", "\\u0000", "\\u202e", "x"]) + '"',
        lambda: json.dumps(rng.choice(["http://[x", "http://[::1", "//evil.example/x",
                                       "/\\evil.com/x", "https://u:p@h/", "javascript:x",
                                       "[x](javascript:alert(1))", "[x](http://[x)"])),
        lambda: rng.choice(["NaN", "Infinity", "true", "null", "0", "-0.5"]),
        lambda: json.dumps("\u202e" * rng.randrange(3) + "text"),
        lambda: str(rng.randrange(-(2**53), 2**53)),
        lambda: json.dumps("x" * rng.randrange(200)),
        lambda: '"\\ud83d\\ude00"',
        lambda: "[]",
        lambda: "[" + ",".join(_hostile_value(rng, depth + 1) for _ in range(rng.randrange(3)))
        + "]",
        lambda: "{" + ",".join(_key(rng) + ":" + _hostile_value(rng, depth + 1)
                               for _ in range(rng.randrange(3))) + "}",
        lambda: '{"url":' + _hostile_value(rng, 9) + ',"title":"t"}',
        lambda: '{"content":' + _hostile_value(rng, 9) + "}",
    ][choice]()


def _message_body(rng):
    method = rng.choice(["ui.render", "ui.notify", "ui.navigate", "ui.progress", "ui.update",
                         "x\\ud800", "ui.render"])
    params = {
        "component_id": '"c"', "component_type": rng.choice(['"card"', '"markdown"', '"image"']),
        "data": _hostile_value(rng), "url": _hostile_value(rng), "title": _hostile_value(rng),
        "message": _hostile_value(rng), "operation": '"merge"', "content": _hostile_value(rng),
    }
    keys = rng.sample(sorted(params), rng.randrange(1, len(params)))
    inner = ",".join(f'"{k}":{params[k]}' for k in keys)
    return f'{{"jsonrpc":"2.0","method":"{method}","params":{{{inner}}}}}'


def _surfaces_body(rng):
    kind = rng.randrange(4)
    if kind == 0:
        return f'[{json.dumps(create("s1"))},{{"version":"v0.9","updateDataModel":' \
               f'{{"surfaceId":"s1","path":"/","value":{_hostile_value(rng)}}}}}]'
    if kind == 1:
        return f'[{json.dumps(create("s1"))},{{"version":"v0.9","updateComponents":' \
               f'{{"surfaceId":"s1","components":[{{"id":"root","component":' \
               f'{rng.choice(COMPONENTS)},"url":{_hostile_value(rng)},' \
               f'"text":{_hostile_value(rng)}}}]}}}}]'
    if kind == 2:
        return "[" + _hostile_value(rng) + "]"
    return f'[{{"version":"v0.9","createSurface":{{"surfaceId":{_hostile_value(rng)},' \
           f'"catalogId":{json.dumps(V09_CAPS["v0.9"]["supportedCatalogIds"][0])}}}}}]'


def test_rest_seeded_hostile_bodies_never_500(agent_key, session):
    rng = random.Random(10)
    client = _client(agent_key)
    base = f"/api/v4/sessions/{session.session_id}"
    statuses = {}
    for i in range(150):
        path, body = (("/messages", _message_body(rng)) if i % 2 else
                      ("/surfaces", _surfaces_body(rng)))
        response = _post(client, base + path, body)
        assert response.status_code < 500, (path, body, response.content[:300])
        _encodable(response.json())
        statuses[response.status_code] = statuses.get(response.status_code, 0) + 1
    assert set(statuses) <= {202, 400, 404, 409, 422}, statuses
    assert statuses.get(400, 0) + statuses.get(422, 0) > 50, statuses


def test_rest_surfaces_display_text_neutralized(agent_key, session):
    """v0.9 Text literals are markdown: link targets vetted; bidi controls removed everywhere."""
    url = f"/api/v4/sessions/{session.session_id}/surfaces"
    batch = [create("s1"), {"version": "v0.9", "updateComponents": {"surfaceId": "s1",
             "components": [{"id": "root", "component": "Text",
                             "text": "Invoice(1)\u202etrela.exe [x](javascript:alert(1))"}]}},
             data("s1", "/", {"label\u2067": "a\u202eb"})]
    response = _post(_client(agent_key), url, json.dumps(batch))
    assert response.status_code == 202, response.content
    state = Surface.objects.get(surface_id="s1").state
    assert state["components"]["root"]["text"] == "Invoice(1)trela.exe [x](#)"
    assert state["dataModel"] == {"label": "ab"}
