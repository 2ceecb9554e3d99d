"""What the fuzz tier found in the socket and REST layers, pinned: every error reply can be sent,
close codes are plain ints, and nothing a peer sends crashes a consumer or answers 500."""

import json
import math

import pytest
from channels.testing import WebsocketCommunicator
from rest_framework.test import APIClient

from a2ui import tokens
from a2ui.infra import groups
from a2ui.models import A2UISessionLog
from a2ui_project.asgi import application
from tests.wsutil import connect_agent, connect_user, init_session, recv, send

pytestmark = pytest.mark.django_db(transaction=True)

SURROGATE_FRAMES = [
    '{"jsonrpc":"1.0","id":"\\ud800"}',
    '{"jsonrpc":"2.0","id":"\\ud800","method":"x\\ud800"}',
    '{"jsonrpc":"2.0","id":1,"method":"x\\udfff","params":{}}',
]


async def _sendable(comm):
    """The next frame, as Daphne would have to send it: UTF-8 text."""
    text = await comm.receive_from(timeout=3)
    text.encode("utf-8")  # UnicodeEncodeError here is Daphne's 1011
    return json.loads(text)


def test_transportable_escapes_lone_surrogates_only():
    from a2ui.consumers.base import transportable

    assert transportable('{"a":"é"}') == '{"a":"é"}'
    escaped = transportable('{"id":"\ud800","m":"x\udfffé"}')
    assert escaped == '{"id":"\\ud800","m":"x\\udfffé"}'
    assert json.loads(escaped) == {"id": "\ud800", "m": "x\udfffé"}


def test_wire_text_never_raises_on_what_it_echoes():
    from a2ui.consumers.base import wire_text

    bad = {"jsonrpc": "2.0", "id": 1, "error": {"code": -32602, "message": "Invalid params",
                                                 "data": {"value": math.inf}}}
    assert json.loads(wire_text(bad)) == {"jsonrpc": "2.0", "id": 1, "error": {
        "code": -32602, "message": "Invalid params"}}
    result = {"jsonrpc": "2.0", "id": "\ud800", "result": {"value": math.nan}}
    reply = json.loads(wire_text(result))
    assert reply["id"] == "\ud800" and reply["error"]["code"] == -32603
    assert wire_text({"jsonrpc": "2.0", "method": "ui.notify", "params": {"x": math.inf}}) is None


async def test_user_socket_echoes_lone_surrogates_escaped(stream_token):
    comm = await connect_user(stream_token)
    await init_session(comm)
    for frame in SURROGATE_FRAMES:
        await comm.send_to(text_data=frame)
        reply = await _sendable(comm)
        # refused at the edge (-32602, lone surrogates are not JSON values we accept) or by
        # the framing (-32600/-32601); either way the reply went out
        assert reply["error"]["code"] in (-32600, -32601, -32602), reply
    await send(comm, {"jsonrpc": "2.0", "id": "ok", "method": "user.cancel",
                      "params": {"task_id": "t"}})
    assert (await recv(comm))["result"] == {"ok": True}


async def test_agent_socket_echoes_a_surrogate_session_id_escaped(agent_key):
    comm = await connect_agent(agent_key)
    await comm.send_to(text_data='{"jsonrpc":"2.0","id":3,"method":"ui.notify","params":'
                                 '{"session_id":"\\ud800","level":"info","title":"x"}}')
    reply = await _sendable(comm)
    assert reply["id"] == 3 and reply["error"]["code"] in (-32000, -32602), reply
    await send(comm, {"jsonrpc": "2.0", "id": 4, "method": "a2ui.sessions", "params": {}})
    assert "result" in await recv(comm)


async def _close_of(comm):
    while True:
        out = await comm.receive_output(timeout=3)
        if out["type"] == "websocket.close":
            return out["code"]


async def test_v09_socket_refusals_close_with_plain_int_codes(stream_token):
    # Daphne (autobahn) sends only a close code that is exactly an int: an IntEnum became 1011.
    comm = WebsocketCommunicator(application, "/ws/v09/a2ui?token=nope")
    assert (await comm.connect())[0]
    code = await _close_of(comm)
    assert type(code) is int and code == 4006
    comm = WebsocketCommunicator(
        application, f"/ws/v09/a2ui?token={stream_token}"
        "&session_id=00000000-0000-0000-0000-000000000000")
    assert (await comm.connect())[0]
    await comm.send_json_to({"version": "v0.9", "capabilities": {"v0.9": {
        "supportedCatalogIds": []}}})
    code = await _close_of(comm)
    assert type(code) is int and code == 4000


async def test_v09_socket_refuses_a_version_that_is_not_a_string(stream_token):
    comm = WebsocketCommunicator(application, f"/ws/v09/a2ui?token={stream_token}")
    assert (await comm.connect())[0]
    await comm.send_json_to({"version": "v0.9", "capabilities": {"v0.9": {
        "supportedCatalogIds": []}}})
    assert "session" in await comm.receive_json_from(timeout=3)
    await comm.send_json_to({"version": {"v": 1}, "action": {}})
    reply = await comm.receive_json_from(timeout=3)
    assert reply["error"]["code"] == "VALIDATION_FAILED", reply


async def test_a_failure_after_the_answer_is_internal_error_not_a_crash(stream_token, monkeypatch,
                                                                         caplog):
    """Work after a2ui.init's answer (telling the agent) failing must not kill the socket."""
    comm = await connect_user(stream_token)
    real = groups.send_group

    async def broken(*args, **kwargs):
        raise OverflowError("Integer value out of range")

    monkeypatch.setattr(groups, "send_group", broken)
    await init_session(comm)
    reply = await recv(comm)
    assert reply == {"jsonrpc": "2.0", "id": None,
                     "error": {"code": -32603, "message": "Internal error"}}
    assert [r.levelname for r in caplog.records if r.exc_info] == ["ERROR"]  # logged once
    monkeypatch.setattr(groups, "send_group", real)
    await send(comm, {"jsonrpc": "2.0", "id": "ok", "method": "user.cancel",
                      "params": {"task_id": "t"}})
    assert (await recv(comm))["result"] == {"ok": True}


async def test_a_failing_channel_layer_event_does_not_crash_the_socket(stream_token):
    comm = await connect_user(stream_token)
    await init_session(comm)
    from channels.layers import get_channel_layer

    layer = get_channel_layer()
    sid = await A2UISessionLog.objects.values_list("session_id", flat=True).afirst()
    consumer_channel = groups.session_group(sid)
    await layer.group_send(consumer_channel, {"type": "a2ui.event", "seq": 1, "kind": "notify"})  # no data
    await send(comm, {"jsonrpc": "2.0", "id": "ok", "method": "user.cancel",
                      "params": {"task_id": "t"}})
    assert (await recv(comm))["result"] == {"ok": True}




@pytest.mark.parametrize("body", [
    b'{"jsonrpc":"2.0","method":"x\\ud800","params":{}}',
    b'{"jsonrpc":"2.0","method":"ui.notify\\udfff","params":{"title":"x"}}',
    b'[{"jsonrpc":"2.0","method":["ui.notify"],"params":{}}]',
    b'{"jsonrpc":"2.0","method":{"a":1},"params":{}}',
], ids=["surrogate", "surrogate-suffix", "list-method", "object-method"])
def test_rest_messages_with_a_bad_method_are_4xx(body, agent_key, session):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {agent_key}")
    response = client.post(f"/api/v4/sessions/{session.session_id}/messages", body,
                           content_type="application/json")
    assert 400 <= response.status_code < 500, response.content
    # surrogates are refused by the JSON value policy first (-32602), the rest by the framing
    assert response.json()["error"]["code"] in (-32600, -32601, -32602)


def test_a_malformed_agent_key_never_reaches_the_database(django_assert_num_queries):
    for raw in ("a2ui_ak_\x00", "a2ui_ak_abc_\x00x", "a2ui_ak_é_x", "a2ui_ak_ab_c d"):
        with django_assert_num_queries(0), pytest.raises(tokens.TokenError):
            tokens.verify_agent_key(raw)


def test_an_sse_event_echoing_a_lone_surrogate_is_utf8():
    from a2ui.v09.stream import sse

    chunk = sse({"text": "x\ud800é"}, 3)
    assert chunk.decode("utf-8") == 'id: 3\ndata: {"text":"x\\ud800\\u00e9"}\n\n'
    assert sse({"text": "é"}, 4).decode("utf-8") == 'id: 4\ndata: {"text":"é"}\n\n'


async def test_a_failing_disconnect_still_ends_the_consumer(stream_token, monkeypatch):
    """The guard logs a failure in disconnect and still stops the consumer (no leak)."""
    from a2ui.sessions import lifecycle as sessions

    comm = await connect_user(stream_token)
    await init_session(comm)

    async def broken(*args, **kwargs):
        raise ConnectionError("redis gone")

    monkeypatch.setattr(sessions, "asocket_closed", broken)
    await comm.disconnect(timeout=3)
    assert comm.future.done() and comm.future.exception() is None


async def test_a_send_racing_the_peers_close_is_dropped_quietly(caplog):
    """Daphne raises autobahn's Disconnected for a send after the peer closed but before the
    consumer got websocket.disconnect (an agent event arriving then): not an error."""
    from autobahn.exception import Disconnected

    from a2ui.jsonrpc.agent import A2UIAgentConsumer

    async def closed_transport(message):
        raise Disconnected("Attempt to send on a closed protocol")

    consumer = A2UIAgentConsumer()
    consumer.base_send = closed_transport
    await consumer.send_obj({"jsonrpc": "2.0", "method": "session.opened", "params": {}})
    assert consumer.gone
    await consumer.send_obj({"jsonrpc": "2.0", "method": "session.closed", "params": {}})
    assert not [r for r in caplog.records if r.levelname == "ERROR"]


async def test_an_unknown_channel_layer_message_type_is_ignored_quietly(stream_token, caplog):
    """A message type this socket has no handler for (another protocol's, a newer version's)
    on the session group is ignored: no error logged, the socket answers as before."""
    comm = await connect_user(stream_token)
    await init_session(comm)
    from channels.layers import get_channel_layer

    sid = await A2UISessionLog.objects.values_list("session_id", flat=True).afirst()
    with caplog.at_level("ERROR", logger="a2ui"):
        await get_channel_layer().group_send(groups.session_group(sid),
                                             {"type": "a2ui.from_the_future", "x": 1})
        await send(comm, {"jsonrpc": "2.0", "id": "ok", "method": "user.cancel",
                          "params": {"task_id": "t"}})
        assert (await recv(comm))["result"] == {"ok": True}
    assert not [r for r in caplog.records if r.levelname == "ERROR"]
    await comm.disconnect()
