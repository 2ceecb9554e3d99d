"""The A2A client against real a2a-sdk 1.3 servers, A2A 1.0 and 0.3, each a subprocess in the
agents' venv (tests/remote_a2a/servers/sdk_agent.py): the card, the extension's activation and
capabilities, a surface, an input-required turn, the action round trip, refused A2UI reported
back, hostile parts, cancel, a dropped stream picked up, a run resumed by another client, and
the limits."""

import asyncio
import json

import pytest

from a2ui.remote import ops
from a2ui.remote.a2a.client import A2AClient
from a2ui.remote.a2a.extension import BASIC_CATALOG_V09, BASIC_CATALOG_V091, EXTENSION_URI, MIME
from a2ui.remote.clients import Limits, Registration, UpstreamError
from tests.live.tcpcut import CuttableRelay
from tests.remote_a2a.agentproc import AgentProcess, free_port
from tests.remote_a2a.driver import Driver, last, texts

pytestmark = pytest.mark.live
ACTION = {"name": "confirm", "surfaceId": "greet", "sourceComponentId": "ok",
          "timestamp": "2026-01-01T00:00:00Z", "context": {"who": "Ada"}}


@pytest.fixture(scope="module", params=["1.0", "0.3"])
def agent(request):
    proc = AgentProcess("sdk_agent.py", "--version", request.param)
    proc.version = request.param
    yield proc
    proc.stop()


async def register(url):
    import httpx
    async with httpx.AsyncClient() as http:
        return await A2AClient().prepare(url, {}, http)


async def driver_for(agent, **kw):
    return Driver(await register(agent.url), **kw)


async def test_card_registration_negotiates_the_version(agent):
    reg = await register(agent.url)
    assert reg["url"] == agent.url + "/" and reg["display_name"] == "Greeter"
    assert reg["config"]["protocol_version"] == agent.version
    assert reg["config"]["a2ui_extension"] == EXTENSION_URI
    by_card_url = await register(agent.url + "/.well-known/agent-card.json")
    assert by_card_url["config"]["card"] == reg["config"]["card"]
    with pytest.raises(Registration, match="No agent card"):
        await register(agent.url + "/nothing/here")


async def test_surface_question_answer_and_action_round_trip(agent):
    d = await driver_for(agent, headers={"Authorization": "Bearer k"})
    first = await d.turn(ops.UserText("hello"))
    surface = [op for op in first if isinstance(op, ops.Surface)][0]
    assert surface.messages[0]["createSurface"]["catalogId"] == BASIC_CATALOG_V09
    assert "Hi!" in texts(first) and "Streaming text." in texts(first)
    ask = last(first, ops.Ask)
    assert ask.kind == "input" and ask.params["prompt"] == "What is your name?"
    context_id, task_id = d.ids["context_id"], d.ids["task_id"]

    second = await d.turn(ops.Answer(ask.request_id, "Ada", resume=ask.resume))
    assert d.surfaces.states.get("greet").data_model == {"greeting": "Hello Ada!", "name": "Ada"}
    assert last(second, ops.Finished).outcome["state"] == "input-required"

    third = await d.turn(ops.Action(ACTION))
    assert texts(third) == 'Action confirm: {"who": "Ada"}'
    assert last(third, ops.Finished).outcome["state"] == "completed"
    assert d.ids["task_id"] == "" and d.ids["context_id"] == context_id

    log = agent.debug_log()[-3:]
    assert [e["task_id"] for e in log] == [task_id] * 3
    assert {e["context_id"] for e in log} == {context_id}
    for entry in log:
        assert entry["extensions"] == [EXTENSION_URI]
        assert entry["message_extensions"] == [EXTENSION_URI]
        assert entry["headers"]["authorization"] == "Bearer k"
        caps = entry["metadata"]["a2uiClientCapabilities"]
        assert caps["v0.9"]["supportedCatalogIds"] == [BASIC_CATALOG_V09, BASIC_CATALOG_V091]
        assert caps["v0.9.1"] == caps["v0.9"]
        if agent.version == "0.3":
            assert entry["headers"]["x-a2a-extensions"] == EXTENSION_URI
            assert entry["headers"]["a2a-version"] == "0.3"
        else:
            assert entry["headers"]["a2a-extensions"] == EXTENSION_URI
            assert "x-a2a-extensions" not in entry["headers"]
            assert entry["headers"]["a2a-version"] == "1.0"
    (action_part,) = log[2]["parts"]
    assert action_part["metadata"] == {"mimeType": MIME}
    expected = {"version": "v0.9", "action": ACTION}
    # A2A 1.0: the extension's list of messages; 0.3 (DataPart.data is an object): the message
    assert action_part["data"] == ([expected] if agent.version == "1.0" else expected)
    await d.close()


async def test_surfaces_in_artifacts(agent):
    d = await driver_for(agent)
    out = await d.turn(ops.UserText("artifact"))
    assert [len(op.messages) for op in out if isinstance(op, ops.Surface)] == [1, 1]
    assert d.surfaces.states.get("greet") is not None
    await d.close()


async def test_a_refused_surface_goes_back_as_the_extensions_error_message(agent):
    d = await driver_for(agent)
    out = await d.turn(ops.UserText("invalid"))
    assert texts(out).startswith("Fixing 1 error(s):")
    errors = [m for p in agent.debug_log()[-1]["parts"]
              for m in (p["data"] if isinstance(p["data"], list) else [p["data"]])]
    assert errors and errors[0]["version"] == "v0.9"
    assert errors[0]["error"]["code"] == "VALIDATION_FAILED"
    assert errors[0]["error"]["surfaceId"] == "greet"
    assert d.surfaces.states.get("greet").data_model["greeting"] == "Fixed."
    await d.close()


async def test_hostile_parts_are_refused_or_passed_on_for_the_checks(agent):
    d = await driver_for(agent)
    out = await d.turn(ops.UserText("hostile"))
    notices = [op.message for op in out if isinstance(op, ops.Notice)]
    assert any("Not an A2UI v0.9 server message" in n for n in notices)
    assert any("must be a JSON object" in n for n in notices)
    # the wrong MIME part (application/json) deleted nothing: it is not A2UI
    assert not any("deleteSurface" in json.dumps(op.messages) for op in out
                   if isinstance(op, ops.Surface))
    assert isinstance(out[-1], ops.Finished)
    await d.close()


async def test_failed_and_auth_required(agent):
    d = await driver_for(agent)
    failed = await d.turn(ops.UserText("fail"))
    assert failed[-1] == ops.Failed("The agent failed: The kitchen is closed.", code="task_failed")
    auth = await d.turn(ops.UserText("auth"))
    ask = last(auth, ops.Ask)
    assert ask.kind == "confirm" and ask.params["description"] == "Sign in at the bank."
    declined = await d.turn(ops.Answer(ask.request_id, {"approved": False}, resume=ask.resume))
    assert declined[-1] == ops.Finished({"state": "canceled"})
    assert {"cancel": ask.resume["task_id"]} in agent.debug_log()
    await d.close()


async def test_cancel_is_tasks_cancel(agent):
    d = await driver_for(agent)
    ctx = d.context()
    task = asyncio.create_task(d.consume(ctx, d.client.run(ctx, ops.UserText("slow"))))
    while not d.ids.get("task_id"):
        await asyncio.sleep(0.05)
    await asyncio.sleep(0.3)
    await d.client.cancel(ctx)  # the run's own context: it knows the task the agent started
    out = await asyncio.wait_for(task, 20)
    assert last(out, ops.Finished).outcome["state"] == "canceled"
    assert not texts(out).endswith("done")
    assert {"cancel": ctx.ids["task_id"]} in agent.debug_log()
    await d.close()


async def test_a_dropped_stream_is_picked_up(agent):
    relay = CuttableRelay("127.0.0.1", agent.port)
    reg = await register(agent.url)
    reg["config"]["card"] = json.loads(json.dumps(reg["config"]["card"]).replace(
        agent.url, f"http://127.0.0.1:{relay.port}"))
    d = Driver(reg)
    ctx = d.context()
    seen = []

    async def run():
        async for op in d.client.run(ctx, ops.UserText("slow")):
            seen.append(op)
        return seen

    task = asyncio.create_task(run())
    while "tick 3" not in texts(seen):
        await asyncio.sleep(0.05)
    relay.cut()
    await asyncio.sleep(0.2)
    relay.restore()
    out = await asyncio.wait_for(task, 30)
    assert texts(out).endswith("done") and last(out, ops.Finished).outcome["state"] == "completed"
    await d.close()


async def test_another_client_resumes_a_run_whose_process_died(agent):
    d = await driver_for(agent)
    ctx = d.context()
    stream = d.client.run(ctx, ops.UserText("slow"))
    first = await d.consume(ctx, stream, until=lambda op: "tick 2" in getattr(op, "delta", ""))
    await stream.aclose()  # the process "dies": nothing cancels the task
    assert d.ids["task_state"] == "working" and texts(first)
    other = Driver(await register(agent.url))
    other.ids = dict(d.ids)
    ctx2 = other.context()
    rest = await other.consume(ctx2, await other.client.resume(ctx2))
    assert texts(rest).endswith("done") and last(rest, ops.Finished).outcome["state"] == "completed"
    assert await other.client.resume(other.context()) is None  # nothing left to pick up
    await d.close()
    await other.close()


async def test_limits(agent):
    d = await driver_for(agent, limits=Limits(event_bytes=300, idle_seconds=30))
    with pytest.raises(UpstreamError, match="passed 300 bytes") as e:
        await d.turn(ops.UserText("hello"))
    assert e.value.code == "too_large"
    d2 = await driver_for(agent, limits=Limits(idle_seconds=0.05))
    with pytest.raises(UpstreamError) as e:
        await d2.turn(ops.UserText("slow"))
    assert e.value.code == "timeout"
    await d.close()
    await d2.close()


async def test_an_unreachable_agent_is_a_clear_error(agent):
    reg = await register(agent.url)
    dead = f"http://127.0.0.1:{free_port()}"
    reg["config"]["card"] = json.loads(json.dumps(reg["config"]["card"]).replace(agent.url, dead))
    d = Driver(reg)
    with pytest.raises(UpstreamError) as e:
        await d.turn(ops.UserText("hello"))
    assert e.value.code == "unreachable" and "Bearer" not in e.value.message
    await d.close()


async def test_resuming_a_task_that_ended_meanwhile_reads_its_final_status(agent):
    d = await driver_for(agent)
    await d.turn(ops.UserText("fail"))
    task_id = agent.debug_log()[-1]["task_id"]
    other = Driver(await register(agent.url))
    other.ids = {"context_id": d.ids["context_id"], "task_id": task_id, "task_state": "working"}
    ctx = other.context()
    out = await other.consume(ctx, await other.client.resume(ctx))
    assert out[-1] == ops.Failed("The agent failed: The kitchen is closed.", code="task_failed")
    await d.close()
    await other.close()
