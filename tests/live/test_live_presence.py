"""Tier 2: the person sees the agent's presence across processes (a2ui.sessions.presence).

The agent's socket is on process A, the person's on process B: the presence record is in
Redis and the change travels through the agent's presence group. (A killed process's liveness
lapsing is tested in process with a short TTL: tests/sessions/test_agent_presence.py.)
"""

import pytest

from tests.live.client import init, open_agent, open_user

pytestmark = pytest.mark.django_db(transaction=True)


def is_status(message):
    return message.get("method") == "a2ui.agent_status"


async def test_the_person_on_one_process_sees_the_agent_on_another_come_and_go(
        two_servers, stream_token, agent_key):
    a, b = two_servers
    person = await open_user(b, stream_token)
    reply = await init(person)
    assert reply["result"]["agent_status"] == "offline"
    agent = await open_agent(a, agent_key)
    assert (await person.recv_until(is_status))["params"] == {"status": "online"}
    # A page opened on process A meanwhile says online at once.
    second = await open_user(a, stream_token)
    assert (await init(second))["result"]["agent_status"] == "online"
    await agent.close()
    assert (await person.recv_until(is_status))["params"] == {"status": "offline"}
    assert (await second.recv_until(is_status))["params"] == {"status": "offline"}
    for client in (person, second):
        await client.close()
