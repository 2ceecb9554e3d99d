"""Remote agents across two Daphne processes (issue 38's "Done when"): a pydantic-ai AG-UI
agent served over HTTP, registered with ``a2ui_agent create --agui-url``, answers a person's
``user.message`` on a JSON-RPC socket; the message goes in on one process, the person also
watches on the other; a process killed mid-run is told to the person, with a retry offered."""

import asyncio
import io
import uuid

import pytest
from django.core.management import call_command

from a2ui import tokens
from tests.live.agentprocs import agent_server  # noqa: F401  (fixture)
from tests.live.client import INIT, open_user

pytestmark = pytest.mark.django_db(transaction=True)

SECRET = "live-" + uuid.uuid4().hex


def register(settings, name, url, host, *headers):
    settings.A2UI = {**getattr(settings, "A2UI", {}), "REMOTE_AGENT_HOSTS": [host]}
    out = io.StringIO()
    call_command("a2ui_agent", "create", name, "--agui-url", url,
                 *[a for h in headers for a in ("--header", h)], stdout=out)
    from a2ui.models import Agent

    return Agent.objects.get(name=name)


def eventually(count, want=None, timeout=10):
    """``count()`` once it stops growing (the last audit is written after the reply)."""
    import time

    deadline, last = time.monotonic() + timeout, None
    while time.monotonic() < deadline:
        now = count()
        if now == last and now:
            return now
        last = now
        time.sleep(0.3)
    return last


def agent_text(message):
    if message.get("method") != "ui.activity" or message["params"]["kind"] != "message":
        return None
    data = message["params"]["data"]
    if data["role"] != "agent" or (data.get("metadata") or {}).get("streaming"):
        return None
    return data["content"].strip()


async def open_session(server, token, session_id=None):
    person = await open_user(server, token)
    init = {**INIT, "params": {**INIT["params"], **(
        {"session_id": session_id} if session_id else {})}}
    await person.send(init)
    reply = await person.recv_until(lambda m: m.get("id") == "init")
    return person, reply["result"]["session_id"]


def test_a_user_message_reaches_a_pydantic_ai_agent_and_its_reply_the_person(
        daphne_server, agent_server, user, settings):  # noqa: F811
    served = agent_server("tests.remote.pydantic_agent:app",
                          env={"A2UI_TEST_AGENT_TOKEN": SECRET})
    agent = register(settings, "helper", served.url, served.host,
                     f"Authorization: Bearer {SECRET}")
    a = daphne_server(A2UI_REMOTE_AGENT_HOSTS=served.host)
    b = daphne_server(A2UI_REMOTE_AGENT_HOSTS=served.host)
    token, token_b = (tokens.issue_stream_token(user, agent).token for _ in range(2))

    async def scenario():
        writer, sid = await open_session(a, token)
        watcher, _ = await open_session(b, token_b, sid)
        assert (await writer.call("user.message", {"content": "hello from A"}, "m1"))[
            "result"] == {"ok": True}
        reply = await watcher.recv_until(lambda m: agent_text(m) is not None, timeout=30)
        assert agent_text(reply) == "Echo: hello from A"
        assert reply["params"]["data"]["sender"] == "helper"
        # The person's own socket shows it too, and a question goes both ways.
        await writer.recv_until(lambda m: agent_text(m) is not None, timeout=30)
        await watcher.call("user.message", {"content": "what is my name?"}, "m2")
        asked = await writer.recv_until(lambda m: m.get("method") == "ui.request_input",
                                        timeout=30)
        await watcher.call("user.respond", {"request_id": asked["params"]["request_id"],
                                            "value": "Ada"}, "r1")
        reply = await writer.recv_until(lambda m: agent_text(m) is not None, timeout=30)
        assert agent_text(reply) == "Nice to meet you, Ada."
        await writer.close()
        await watcher.close()

    asyncio.run(scenario())
    from a2ui.models import AuditEvent

    assert eventually(lambda: AuditEvent.objects.filter(action="remote.run_ended").count()) == 3
    assert not AuditEvent.objects.filter(details__icontains=SECRET).exists()


def test_a_process_killed_mid_run_is_told_and_a_retry_offered(
        daphne_server, agent_server, user, settings):  # noqa: F811
    served = agent_server("tests.remote.pydantic_agent:app")
    agent = register(settings, "helper", served.url, served.host)
    env = {"A2UI_REMOTE_AGENT_HOSTS": served.host, "A2UI_AGUI_RUN_LEASE_SECONDS": "2"}
    a = daphne_server(**env)
    b = daphne_server(**env)
    token, token_b = (tokens.issue_stream_token(user, agent).token for _ in range(2))

    async def scenario():
        writer, sid = await open_session(a, token)
        watcher, _ = await open_session(b, token_b, sid)
        await writer.call("user.message", {"content": "answer slowly please, one two three "
                                           "four five six seven eight"}, "m1")
        # The run streams from A; A dies mid-answer.
        await watcher.recv_until(lambda m: m.get("method") == "ui.activity"
                                 and m["params"]["data"].get("role") == "agent", timeout=30)
        a.kill()
        told = await watcher.recv_until(
            lambda m: m.get("method") == "ui.activity"
            and m["params"]["data"].get("role") == "system", timeout=30)
        assert "interrupted" in told["params"]["data"]["content"]
        retry = await watcher.recv_until(lambda m: m.get("method") == "ui.confirm", timeout=30)
        assert "Try again" in retry["params"]["title"]
        await watcher.call("user.approve", {"request_id": retry["params"]["request_id"],
                                            "approved": True}, "ok")
        # Run again, on B now.
        await watcher.recv_until(lambda m: m.get("method") == "ui.activity"
                                 and m["params"]["data"].get("role") == "agent", timeout=30)
        await watcher.close()

    asyncio.run(scenario())
    from a2ui.models import AuditEvent
    from a2ui.remote.models import RemoteRun

    assert eventually(lambda: AuditEvent.objects.filter(action="remote.run_lost").count()) == 1
    assert RemoteRun.objects.filter(status="interrupted").count() == 1
