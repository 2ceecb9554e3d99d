"""A person's AG-UI 1.0 run against this server (POST /api/v4/agui/run) with a remote agent:
the run's new message starts the agent's run; the reply streams as one text message (START
once, CONTENT as it grows, END); the agent's question ends the run with an interrupt and the
next run's ``resume`` answers it; the person's run ends with the agent's."""

import pytest
from ag_ui.core import EventType

from tests.agui1.sse import issue, start

pytestmark = pytest.mark.django_db(transaction=True)


def kinds(events):
    return [e["type"] for e in events]


async def test_an_agui1_run_gets_the_remote_agents_streamed_reply(remote_agent, user):
    from channels.db import database_sync_to_async

    agent = await database_sync_to_async(remote_agent)("slow_echo")
    token = await issue(user, agent)
    run = await start(token, "run-1", text="hello there")
    events = await run.rest(timeout=10)
    texts = [e for e in events if e["type"].startswith("TEXT_MESSAGE")
             and e.get("messageId", "").startswith("reply-")]
    assert [e["type"] for e in texts][0] == EventType.TEXT_MESSAGE_START
    assert [e["type"] for e in texts][-1] == EventType.TEXT_MESSAGE_END
    assert sum(e["type"] == EventType.TEXT_MESSAGE_START for e in texts) == 1
    contents = [e["delta"] for e in texts if e["type"] == EventType.TEXT_MESSAGE_CONTENT]
    assert len(contents) > 1  # shown as it streamed, each CONTENT what the message added
    assert "".join(contents) == "You said: hello there "
    assert events[-1]["type"] == EventType.RUN_FINISHED


async def test_an_agui1_run_answers_the_agents_question_with_resume(remote_agent, user):
    from channels.db import database_sync_to_async

    agent = await database_sync_to_async(remote_agent)("asker")
    token = await issue(user, agent)
    first = await (await start(token, "run-1", text="hi")).rest(timeout=10)
    finished = first[-1]
    assert finished["type"] == EventType.RUN_FINISHED and finished["outcome"]["type"] == \
        "interrupt"
    interrupt = finished["outcome"]["interrupts"][0]
    second = await (await start(token, "run-2", text="", resume=[
        {"interruptId": interrupt["id"], "status": "resolved", "payload": "Ada"}])).rest(
        timeout=10)
    said = "".join(e.get("delta", "") for e in second
                   if e["type"] == EventType.TEXT_MESSAGE_CONTENT)
    assert "Hello, Ada!" in said
    assert second[-1]["type"] == EventType.RUN_FINISHED
