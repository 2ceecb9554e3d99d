"""The runtime of remote agents in process (a2ui.remote.runtime): a person's message on the
JSON-RPC socket runs an in-process AG-UI agent, whose streamed reply, surfaces, state, tool
calls and questions reach the person through the same services as an agent's push."""

import asyncio

import pytest
from channels.db import database_sync_to_async

from a2ui.models import AuditEvent, SessionActivity
from a2ui.models.remote import RemoteRun
from tests.wsutil import connect_user, init_session, recv, send

pytestmark = pytest.mark.django_db(transaction=True)


def message(content, rpc_id="m1"):
    return {"jsonrpc": "2.0", "id": rpc_id, "method": "user.message",
            "params": {"content": content}}


async def frames_until(comm, done, timeout=20):
    got = []
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while loop.time() < end:
        try:
            frame = await recv(comm, timeout=max(0.05, end - loop.time()))
        except TimeoutError:
            break
        got.append(frame)
        if done(frame, got):
            return got
    raise AssertionError(f"not seen in {timeout} s: {got}")


def activity(frames, kind="message"):
    return [f["params"]["data"] for f in frames
            if f.get("method") == "ui.activity" and f["params"]["kind"] == kind]


def final_agent_message(frame, _):
    data = frame.get("params", {}).get("data", {}) if frame.get("method") == "ui.activity" \
        else {}
    return data.get("role") == "agent" and not (data.get("metadata") or {}).get("streaming")


@database_sync_to_async
def runs(sid):
    return list(RemoteRun.objects.filter(session_id=sid).order_by("created_at")
                .values_list("status", flat=True))


@database_sync_to_async
def audit_actions(sid):
    return list(AuditEvent.objects.filter(session_id=sid).order_by("id")
                .values_list("action", flat=True))


async def settled(sid, statuses=("finished",), timeout=20):
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout  # generous: a shared CI machine
    while loop.time() < end:
        found = await runs(sid)
        if found and all(s in statuses or s in ("merged",) for s in found):
            return found
        await asyncio.sleep(0.02)
    raise AssertionError(await runs(sid))


async def test_a_message_runs_the_agent_and_its_streamed_reply_reaches_the_person(
        remote_agent, person_token):
    agent = await database_sync_to_async(remote_agent)("echo")
    person = await connect_user(await database_sync_to_async(person_token)(agent))
    sid = await init_session(person)
    await send(person, message("hello <b>there</b>"))
    frames = await frames_until(person, final_agent_message)
    replies = [m for m in activity(frames) if m["role"] == "agent"]
    assert replies[-1]["content"] == "You said: hello there"
    assert replies[-1]["sender"] == "shop"
    assert all(m["message_id"] == replies[-1]["message_id"] for m in replies)
    assert await settled(sid) == ["finished"]
    stored = await database_sync_to_async(
        lambda: SessionActivity.objects.get(session_id=sid).transcript)()
    assert [(m["role"], m["content"]) for m in stored] == [
        ("user", "hello there"), ("agent", "You said: hello there")]
    actions = await audit_actions(sid)
    assert "remote.run_started" in actions and "remote.run_ended" in actions
    await person.disconnect()


async def test_a_question_tool_asks_the_person_and_the_answer_resumes_the_run(
        remote_agent, person_token):
    agent = await database_sync_to_async(remote_agent)("asker")
    person = await connect_user(await database_sync_to_async(person_token)(agent))
    sid = await init_session(person)
    await send(person, message("hi"))
    frames = await frames_until(person, lambda f, _: f.get("method") == "ui.request_input")
    request = frames[-1]["params"]
    assert request["prompt"] == "Your name?" and request["input_type"] == "text"
    assert await settled(sid, ("waiting",)) == ["waiting"]
    await send(person, {"jsonrpc": "2.0", "id": "r1", "method": "user.respond",
                        "params": {"request_id": request["request_id"], "value": "Ada"}})
    frames = await frames_until(person, final_agent_message)
    assert [m["content"] for m in activity(frames) if m["role"] == "agent"][-1] == "Hello, Ada!"
    assert await settled(sid, ("waiting", "finished")) == ["waiting", "finished"]
    await person.disconnect()


async def test_surfaces_state_and_tool_calls_and_an_action_back(remote_agent, person_token):
    from a2ui.models import Surface

    agent = await database_sync_to_async(remote_agent)("shop")
    person = await connect_user(await database_sync_to_async(person_token)(agent))
    sid = await init_session(person)
    await send(person, message("hats?"))
    await settled(sid)
    ids = await database_sync_to_async(
        lambda: sorted(Surface.objects.filter(session_id=sid).values_list("surface_id",
                                                                          flat=True)))()
    assert ids == ["more", "shop"]
    act = await database_sync_to_async(
        lambda: SessionActivity.objects.get(session_id=sid))()
    assert act.state == {"cart": [], "step": "browse"}
    assert [(c["call_id"], c["tool_name"]) for c in act.tool_calls] == [("t1", "search")]
    # The person's action on the agent's surface is the next turn (as the middleware says it).
    from a2ui.remote import agents as remote_agents
    from a2ui.remote import runtime
    from tests.remote import agents

    row = await remote_agents.remote_agent(agent.pk)
    await runtime.submit(row, __import__("uuid").UUID(sid), __import__(
        "a2ui.remote.ops", fromlist=["Action"]).Action(
        {"name": "buy", "surfaceId": "shop", "sourceComponentId": "buy",
         "context": {"item": "hat"}}))
    await settled(sid)
    last = agents.seen[-1]
    assert last.forwarded_props["a2uiAction"]["userAction"]["name"] == "buy"
    assert last.messages[-1].role == "tool" and "buy" in last.messages[-1].content
    stored = await database_sync_to_async(
        lambda: SessionActivity.objects.get(session_id=sid).transcript)()
    assert stored[-1]["content"] == "Bought: hat"
    await person.disconnect()


async def test_a_run_error_is_a_clear_message_and_an_audit_entry(remote_agent, person_token):
    agent = await database_sync_to_async(remote_agent)("failing")
    person = await connect_user(await database_sync_to_async(person_token)(agent))
    sid = await init_session(person)
    await send(person, message("hi"))
    assert await settled(sid, ("error",)) == ["error"]
    stored = await database_sync_to_async(
        lambda: SessionActivity.objects.get(session_id=sid).transcript)()
    said = stored[-1]
    assert said["role"] == "system" and "The model is down" in said["content"]
    assert "<script>" not in said["content"]
    ended = await database_sync_to_async(lambda: AuditEvent.objects.filter(
        session_id=sid, action="remote.run_ended").values_list("details", flat=True).get())()
    assert ended["status"] == "error" and ended["code"] == "MODEL_DOWN"
    await person.disconnect()


async def test_a_silent_agent_is_stopped_at_the_idle_limit(remote_agent, person_token):
    agent = await database_sync_to_async(remote_agent)(
        "silent", REMOTE_AGENT_IDLE_TIMEOUT_SECONDS=1)
    person = await connect_user(await database_sync_to_async(person_token)(agent))
    sid = await init_session(person)
    await send(person, message("hi"))
    assert await settled(sid, ("error",)) == ["error"]
    stored = await database_sync_to_async(
        lambda: SessionActivity.objects.get(session_id=sid).transcript)()
    assert "sent nothing for too long" in stored[-1]["content"]
    await person.disconnect()


async def test_a_second_message_waits_for_the_run_and_a_full_queue_is_refused(
        remote_agent, person_token):
    agent = await database_sync_to_async(remote_agent)("silent", REMOTE_AGENT_MAX_QUEUED=1)
    person = await connect_user(await database_sync_to_async(person_token)(agent))
    sid = await init_session(person)
    await send(person, message("one", "a"))
    for _ in range(100):
        if await runs(sid) == ["running"]:
            break
        await asyncio.sleep(0.02)
    await send(person, message("two", "b"))
    await send(person, message("three", "c"))
    frames = await frames_until(person, lambda f, _: f.get("id") == "c")
    refused = frames[-1]
    assert refused["error"]["code"] == -32029 or "error" in refused, refused
    assert "wait for its answer" in refused["error"]["message"]
    assert await runs(sid) == ["running", "queued"]
    # The person stops the run: the queued message runs next.
    from a2ui.remote import runtime

    assert await runtime.cancel(__import__("uuid").UUID(sid), "person")
    for _ in range(100):
        found = await runs(sid)
        if found[0] == "cancelled" and found[1] in ("running", "error", "finished"):
            break
        await asyncio.sleep(0.02)
    assert found[0] == "cancelled", found
    await runtime.cancel(__import__("uuid").UUID(sid), "person")
    await person.disconnect()


async def test_a_pydantic_ai_agent_in_process_answers_and_asks(remote_agent, person_token):
    """pydantic-ai's AGUIAdapter (a Starlette app) as an in-process agent: its reply streams to
    the person; its call of the question tool is a request whose answer resumes it."""
    agent = await database_sync_to_async(remote_agent)("tests.remote.pydantic_agent:app",
                                                       name="py")
    person = await connect_user(await database_sync_to_async(person_token)(agent))
    sid = await init_session(person)
    await send(person, message("hello pydantic"))
    frames = await frames_until(person, final_agent_message)
    assert [m["content"] for m in activity(frames) if m["role"] == "agent"][-1].strip() == \
        "Echo: hello pydantic"
    await send(person, message("ask my name", "m2"))
    frames = await frames_until(person, lambda f, _: f.get("method") == "ui.request_input")
    request = frames[-1]["params"]
    assert request["prompt"] == "What is your name?"
    await send(person, {"jsonrpc": "2.0", "id": "r1", "method": "user.respond",
                        "params": {"request_id": request["request_id"], "value": "Ada"}})
    frames = await frames_until(person, final_agent_message)
    assert [m["content"] for m in activity(frames) if m["role"] == "agent"][-1] == \
        "Nice to meet you, Ada."
    assert await settled(sid, ("finished", "waiting")) == ["finished", "waiting", "finished"]
    await person.disconnect()


async def test_the_consent_gate_comes_before_a_run(remote_agent, person_token, settings):
    import uuid

    from a2ui.remote import agents as remote_agents
    from a2ui.remote import ops, runtime
    from tests.remote import agents

    agent = await database_sync_to_async(remote_agent)(
        "echo", REQUIRED_CONSENTS=["data_collection"])
    person = await connect_user(await database_sync_to_async(person_token)(agent))
    sid = await init_session(person)
    await send(person, message("hi"))
    refused = await frames_until(person, lambda f, _: f.get("id") == "m1")
    assert refused[-1]["error"]["code"] == -32010  # the socket's own gate: nothing queued
    assert await runs(sid) == []
    before = len(agents.seen)
    row = await remote_agents.remote_agent(agent.pk)
    await runtime.submit(row, uuid.UUID(sid), ops.UserText("hi"))  # past the socket (any path)
    assert await settled(sid, ("cancelled",)) == ["cancelled"]
    assert len(agents.seen) == before  # the agent was never called
    await person.disconnect()


async def test_a_remote_agent_is_online_while_a_server_process_serves_it(remote_agent,
                                                                         person_token):
    from a2ui.sessions import presence

    agent = await database_sync_to_async(remote_agent)("echo")
    person = await connect_user(await database_sync_to_async(person_token)(agent))
    await init_session(person)  # session.opened: this process serves the agent from now on
    for _ in range(100):
        if await presence.astatus(agent.pk) == presence.ONLINE:
            break
        await asyncio.sleep(0.05)
    assert await presence.astatus(agent.pk) == presence.ONLINE
    await person.disconnect()
