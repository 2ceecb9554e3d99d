"""Tier 2, issue 38's "done when" for A2A: an a2a-sdk agent (a subprocess, A2A 1.0) registered
with ``a2ui_agent create NAME --a2a-url URL`` answers a person's message with an A2UI surface;
the person's v0.9 socket on another Daphne process sees it, and the person's action there
reaches the agent, whose reply reaches the person's JSON-RPC socket on the first process."""

import json

import pytest
from channels.db import database_sync_to_async
from django.core.management import call_command

from a2ui.models import Agent
from a2ui.remote.a2a.extension import EXTENSION_URI
from tests.live.client import Client, init_session, open_user
from tests.live.test_live_capabilities import CAPS
from tests.live.test_live_mcp import issue
from tests.remote_a2a.agentproc import AgentProcess

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(params=["1.0", "0.3"])
def a2a_agent(request):
    proc = AgentProcess("sdk_agent.py", "--version", request.param)
    yield proc
    proc.stop()


def agent_text(frame):
    data = frame.get("params", {}).get("data", {}) if frame.get("method") == "ui.activity" \
        else {}
    return data.get("content", "") if data.get("role") == "agent" else ""


async def test_live_a2a_surface_on_the_v09_socket_and_the_action_back_to_the_agent(
        daphne_server, user, settings, a2a_agent):
    hosts = f"127.0.0.1:{a2a_agent.port}"
    settings.A2UI = {**getattr(settings, "A2UI", {}), "REMOTE_AGENT_HOSTS": [hosts]}
    await database_sync_to_async(call_command)("a2ui_agent", "create", "greeter",
                                               "--a2a-url", a2a_agent.url)
    agent = await database_sync_to_async(Agent.objects.get)(name="greeter")
    a = daphne_server(A2UI_REMOTE_AGENT_HOSTS=hosts)
    b = daphne_server(A2UI_REMOTE_AGENT_HOSTS=hosts)

    person = await open_user(a, await issue(user, agent))
    sid = await init_session(person)
    v09 = await Client.open(f"{b.ws_url}/ws/v09/a2ui?token={await issue(user, agent)}"
                            f"&session_id={sid}")
    await v09.send({"version": "v0.9", "capabilities": CAPS})
    await v09.recv()  # the session
    await person.send({"jsonrpc": "2.0", "id": "m1", "method": "user.message",
                       "params": {"content": "show"}})

    create = await v09.recv_until(lambda m: "createSurface" in m)
    assert create["createSurface"]["surfaceId"] == "greet"
    await v09.recv_until(lambda m: "updateDataModel" in m)
    await v09.send({"version": "v0.9", "action": {
        "name": "confirm", "surfaceId": "greet", "sourceComponentId": "ok",
        "timestamp": "2026-01-01T00:00:00Z", "context": {"who": "Ada"}}})

    reply = await person.recv_until(lambda f: agent_text(f).startswith("Action confirm"))
    assert agent_text(reply) == 'Action confirm: {"who": "Ada"}'
    log = a2a_agent.debug_log()
    assert [e["extensions"] for e in log] == [[EXTENSION_URI]] * 2
    action = log[-1]["parts"][0]["data"]
    action = action[0] if isinstance(action, list) else action
    assert action["action"]["name"] == "confirm" and action["action"]["surfaceId"] == "greet"
    assert log[0]["context_id"] == log[1]["context_id"] and log[0]["task_id"] == log[1]["task_id"]
    assert json.dumps(log[0]["metadata"]["a2uiClientCapabilities"]).count("v0_9") >= 1
    await v09.close()
    await person.close()


def test_live_a2a_run_of_a_killed_process_is_resumed_by_the_other(daphne_server, user, settings):
    """The run streams on A; A is killed; B's sweep finds the run lost and resumes it with
    SubscribeToTask (the task id was kept as soon as the agent named it): the rest of the
    agent's stream reaches the person, and the agent got one message, not two."""
    import asyncio

    from a2ui.models.remote import RemoteRun
    from tests.live.test_live_remote_agents import open_session

    served = AgentProcess("sdk_agent.py")
    try:
        hosts = f"127.0.0.1:{served.port}"
        settings.A2UI = {**getattr(settings, "A2UI", {}), "REMOTE_AGENT_HOSTS": [hosts]}
        call_command("a2ui_agent", "create", "ticker", "--a2a-url", served.url)
        agent = Agent.objects.get(name="ticker")
        env = {"A2UI_REMOTE_AGENT_HOSTS": hosts, "A2UI_AGUI_RUN_LEASE_SECONDS": "2"}
        a, b = daphne_server(**env), daphne_server(**env)
        from a2ui import tokens
        token, token_b = (tokens.issue_stream_token(user, agent).token for _ in range(2))

        async def scenario():
            writer, sid = await open_session(a, token)
            await writer.call("user.message", {"content": "slow 120"}, "m1")
            # B joins once A holds the run (else B's sweep may take a queue A is slow to
            # drain, and there is no run on A to lose)
            await writer.recv_until(lambda m: "tick 1" in json.dumps(m), timeout=30)
            watcher, _ = await open_session(b, token_b, sid)
            await watcher.recv_until(lambda m: "tick 3" in json.dumps(m), timeout=30)
            a.kill()
            done = await watcher.recv_until(
                lambda m: agent_text(m).endswith("done"), timeout=60)
            assert "tick 119" in agent_text(done)
            await watcher.close()

        asyncio.run(scenario())
        log = served.debug_log()
        assert len([e for e in log if "parts" in e]) == 1, log
        import time
        deadline = time.monotonic() + 15  # the run's end is written after its last text
        while time.monotonic() < deadline:
            statuses = sorted(RemoteRun.objects.values_list("status", flat=True))
            if statuses == ["finished", "interrupted"]:
                break
            time.sleep(0.2)
        assert statuses == ["finished", "interrupted"], statuses
    finally:
        served.stop()


def test_live_a_person_who_stops_an_a2a_run_cancels_the_agents_task(daphne_server, user,
                                                                    settings):
    import asyncio

    from a2ui import tokens
    from tests.live.test_live_remote_agents import open_session

    served = AgentProcess("sdk_agent.py")
    try:
        hosts = f"127.0.0.1:{served.port}"
        settings.A2UI = {**getattr(settings, "A2UI", {}), "REMOTE_AGENT_HOSTS": [hosts]}
        call_command("a2ui_agent", "create", "ticker", "--a2a-url", served.url)
        agent = Agent.objects.get(name="ticker")
        a = daphne_server(A2UI_REMOTE_AGENT_HOSTS=hosts)
        token = tokens.issue_stream_token(user, agent).token

        async def scenario():
            person, _ = await open_session(a, token)
            await person.call("user.message", {"content": "slow 200"}, "m1")
            await person.recv_until(lambda m: "tick 3" in json.dumps(m), timeout=30)
            reply = await person.call("user.cancel", {"task_id": "run"}, "c1")
            assert "result" in reply, reply
            await person.recv_until(lambda m: agent_text(m) == "" and "Stopped." in json.dumps(m),
                                    timeout=30)
            await person.close()

        asyncio.run(scenario())
        task_id = served.debug_log()[0]["task_id"]
        import time
        deadline = time.monotonic() + 10
        while {"cancel": task_id} not in served.debug_log() and time.monotonic() < deadline:
            time.sleep(0.2)
        assert {"cancel": task_id} in served.debug_log()
    finally:
        served.stop()
