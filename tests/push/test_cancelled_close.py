"""A socket whose application is cancelled still cleans up after itself.

Daphne cancels an application still running ``application_close_timeout`` (10 s) after its
client left. Under a mass close (10,000 sockets at once) thousands of disconnects queue behind
each other and many were cancelled while they waited or halfway through: they stayed registered
for direct delivery (the process kept their memory), their sessions stayed counted as attached
and their leases held. The clean-up now runs in a task the cancel does not reach
(``consumers.base.SafeSocketMixin``); the memory collection waits for it.
"""

import asyncio

import pytest
from channels.db import database_sync_to_async

from a2ui.infra import memory, shared
from a2ui.models import A2UISessionLog
from a2ui.push import direct
from a2ui.sessions import lifecycle as sessions
from tests.wsutil import connect_user, init_session

pytestmark = pytest.mark.django_db(transaction=True)
get = database_sync_to_async(lambda sid: A2UISessionLog.objects.get(pk=sid))


async def settled(sid, timeout=5):
    """Wait until the session is detached and no socket of it is registered here."""
    for _ in range(int(timeout / 0.02)):
        if (await get(sid)).detached_at is not None and not direct.registered():
            return True
        await asyncio.sleep(0.02)
    return False


async def test_cancelled_before_its_disconnect_was_handled(stream_token):
    user = await connect_user(stream_token)
    sid = await init_session(user)
    assert direct.registered()
    # The client left, and Daphne gave up on the socket before its disconnect was handled.
    await user.send_input({"type": "websocket.disconnect", "code": 1006})
    user.future.cancel()
    assert await settled(sid)
    assert await shared.socket_count(sid.replace("-", "")) in (0, None)


async def test_cancelled_halfway_through_its_disconnect(stream_token, monkeypatch):
    user = await connect_user(stream_token)
    sid = await init_session(user)
    waiting, go_on = asyncio.Event(), asyncio.Event()
    real = sessions.asocket_closed

    async def slow(*args, **kwargs):
        waiting.set()
        await go_on.wait()
        return await real(*args, **kwargs)

    monkeypatch.setattr(sessions, "asocket_closed", slow)
    finishing = memory.counts.finishing
    await user.send_input({"type": "websocket.disconnect", "code": 1000})
    await asyncio.wait_for(waiting.wait(), 5)
    user.future.cancel()  # halfway: the socket count not yet taken back
    await asyncio.sleep(0.05)
    assert user.future.done()
    assert (await get(sid)).detached_at is None
    assert memory.counts.finishing == finishing + 1  # the collection waits for it
    go_on.set()
    assert await settled(sid)
    # The clean-up's last steps (after the detach) and its done callback come next.
    for _ in range(250):
        if memory.counts.finishing == finishing:
            break
        await asyncio.sleep(0.02)
    assert memory.counts.finishing == finishing


async def test_any_other_cancel_is_left_as_it_was(stream_token):
    """The event loop's end (a server's shutdown, a test's) cancels sockets whose client did
    not leave: no clean-up is started for them."""
    user = await connect_user(stream_token)
    await init_session(user)
    finishing = memory.counts.finishing
    user.future.cancel()
    await asyncio.sleep(0.05)
    assert memory.counts.finishing == finishing and direct.registered()
    direct.clear()
