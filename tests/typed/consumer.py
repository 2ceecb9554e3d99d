"""A product team's code, as its type checker reads it: checked by mypy in CI (``make lint``,
strict: ``[tool.mypy]`` in pyproject.toml), never run. Each call spells out the type the
public surface gives it, so a type that is lost (``Any``) or wrong fails the check."""

from __future__ import annotations

from typing import Any, assert_type
from uuid import UUID

from django.template import Context
from django.utils.safestring import SafeString

from a2ui import agents
from a2ui.agents import AgentEvents, SurfaceEvents
from a2ui.conf import A2UISettings, a2ui_settings
from a2ui.models import Agent
from a2ui.push.outcome import Pushed, Sent
from a2ui.rpc.answers import (
    AgentEvent,
    Approval,
    Delivered,
    PendingItem,
    RunEnd,
    SurfaceEvent,
    SurfacesDelivered,
)
from a2ui.sdk import AgentClient
from a2ui.templatetags.a2ui import a2ui_client, a2ui_csp_nonce, a2ui_import_map


async def python_api(agent: Agent, session_id: UUID) -> None:
    assert_type(await agents.arender(agent, session_id, "card", {"title": "Hi"}), str)
    seq = await agents.aupdate(agent, session_id, "c1", {"title": "Bye"}, idempotency_key="k")
    assert_type(seq, Sent | Pushed)
    if isinstance(seq, Pushed) and seq.warning is not None:
        assert_type(seq.warning, str)
    if isinstance(seq, Sent) and seq.clients is not None:
        assert_type(seq.clients, dict[str, int])
    assert_type(await agents.aprogress(agent, session_id, "t", value=3, total=10), Sent | Pushed)
    assert_type(await agents.anotify(agent, str(session_id), "Saved", level="success"),
                Sent | Pushed)
    assert_type(await agents.anavigate(agent.pk, session_id, "/next", new_tab=True),
                Sent | Pushed)
    assert_type(await agents.aagui_event(agent, session_id, {"type": "TEXT_MESSAGE"}),
                Sent | Pushed)
    assert_type(await agents.arequest_input(agent, session_id, "text", "Name?"), Any)
    approval = await agents.aconfirm(agent, session_id, "Delete?", severity="warning")
    assert_type(approval, Approval)
    assert_type(approval["approved"], bool)
    assert_type(await agents.apending(agent), list[PendingItem])
    assert_type(await agents.asurfaces(agent, session_id, []), SurfacesDelivered)
    assert_type(await agents.afinish_run(agent, session_id, "run-1"), RunEnd)
    assert_type(await agents.aerror_run(agent, session_id, "run-1", "failed"), RunEnd)
    assert_type(await agents.aruns(agent), list[dict[str, Any]])
    assert_type(await agents.apush(agent, session_id, "ui.render", {}), Any)

    async with agents.events(agent) as heard:
        assert_type(heard, AgentEvents)
        async for event in heard:
            assert_type(event, AgentEvent)
            assert_type(event["method"], str)
        assert_type(await heard.next(timeout=5), AgentEvent)
    async with agents.surface_events(agent, session_id) as actions:
        assert_type(actions, SurfaceEvents)
        async for action in actions:
            assert_type(action, SurfaceEvent)
            assert_type(action["messages"], list[dict[str, Any]])


def sync_twins(agent: Agent, session_id: UUID) -> None:
    # async_to_sync keeps the signatures: the sync functions are checked as their async ones.
    assert_type(agents.render(agent, session_id, "card", {"title": "Hi"}), str)
    assert_type(agents.update(agent, session_id, "c1", {}), Sent | Pushed)
    assert_type(agents.confirm(agent, session_id, "Delete?"), Approval)
    assert_type(agents.request_input(agent, session_id, "text", "Name?"), Any)
    assert_type(agents.pending_requests(agent), list[PendingItem])
    assert_type(agents.surfaces(agent, session_id, []), SurfacesDelivered)
    assert_type(agents.finish_run(agent, session_id, "run-1", {"ok": True}), RunEnd)
    assert_type(agents.running_runs(agent), list[dict[str, Any]])


async def sdk(key: str) -> None:
    async def opened(params: dict[str, Any]) -> None:
        pass

    async with AgentClient("ws://127.0.0.1:8000/ws/v4/a2ui/agent", key) as client:
        assert_type(client, AgentClient)
        client.on("session.opened", opened)
        assert_type(await client.render("s", "card", {"title": "Hi"}), str)
        answer = await client.update("s", "c1", {"title": "Bye"})
        assert_type(answer, Delivered)
        assert_type(answer["seq"], int | None)
        assert_type(await client.confirm("s", "Delete?"), Approval)
        assert_type(await client.say("s", "Hello"), Delivered)
        assert_type(await client.surfaces("s", []), SurfacesDelivered)
        assert_type(await client.pending(), list[PendingItem])
        assert_type(await client.finish_run("s", "run-1"), RunEnd)
        assert_type(await client.sessions(), list[dict[str, Any]])


def template_tag(context: Context) -> None:
    assert_type(a2ui_csp_nonce(context), str)
    assert_type(a2ui_import_map(context), SafeString)
    assert_type(a2ui_client(context, agent="helper", chat=True), dict[str, Any])


def settings(own: A2UISettings) -> None:
    assert_type(a2ui_settings.CONFIRM_TIMEOUT_SECONDS, int)
    assert_type(a2ui_settings.DEFAULT_AGENT, str | None)
    assert_type(own.AGENT_PING_SECONDS, float)
    assert_type(a2ui_settings.MCP_SESSION_IDLE_SECONDS, int)
    a2ui_settings.reload()
