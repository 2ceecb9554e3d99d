"""A socket that opens no session within HANDSHAKE_TIMEOUT_SECONDS is told why and closed: on
/ws/v4/a2ui (no a2ui.init: -32000, close 4000; it used to stay open for the idle hour, holding
its connection and group memberships) and /ws/v09/a2ui (no capabilities: CAPABILITIES_REQUIRED,
close 1008). A socket that made its handshake is left alone."""

import asyncio
import json

import pytest
from channels.testing import WebsocketCommunicator

from a2ui.consumers.socket import SessionSocket
from a2ui.push import sessions as session_actions
from a2ui_project.asgi import application
from tests.wsutil import connect_user, init_session

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def short_deadline(monkeypatch):
    monkeypatch.setattr(SessionSocket, "HANDSHAKE_TIMEOUT_SECONDS", 0.3)


async def test_user_socket_without_init_is_closed(short_deadline, stream_token):
    comm = await connect_user(stream_token)
    reply = json.loads(await comm.receive_from(timeout=3))
    assert reply["id"] is None and reply["error"]["code"] == -32000
    assert reply["error"]["data"]["timeout_seconds"] == 0.3
    closed = await comm.receive_output(timeout=3)
    assert closed == {"type": "websocket.close", "code": 4000}


async def test_user_socket_with_init_stays(short_deadline, stream_token):
    comm = await connect_user(stream_token)
    await init_session(comm)
    await asyncio.sleep(0.6)
    assert await comm.receive_nothing(timeout=0.2)
    await comm.disconnect()


async def test_v09_socket_without_capabilities_is_closed(short_deadline, stream_token):
    comm = WebsocketCommunicator(application, f"/ws/v09/a2ui?token={stream_token}")
    assert (await comm.connect())[0]
    frame = json.loads(await comm.receive_from(timeout=3))
    assert frame["error"]["code"] == "CAPABILITIES_REQUIRED"
    assert await comm.receive_output(timeout=3) == {"type": "websocket.close", "code": 1008}


async def test_an_init_under_way_at_the_deadline_is_let_finish(short_deadline, stream_token,
                                                               monkeypatch):
    """Under load an a2ui.init that arrived in time may still be waiting on the database when
    the deadline passes: it completes, and the socket stays."""

    slow = session_actions.aadmit

    async def aadmit(*args, **kwargs):
        await asyncio.sleep(0.6)
        return await slow(*args, **kwargs)

    monkeypatch.setattr(session_actions, "aadmit", aadmit)
    comm = await connect_user(stream_token)
    sid = await init_session(comm)
    assert sid
    await asyncio.sleep(0.3)
    assert await comm.receive_nothing(timeout=0.2)
    await comm.disconnect()
