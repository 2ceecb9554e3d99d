# ruff: noqa: B018, F841  (misuses, each a line mypy must report)
"""Misuses a team's checker must report: each line marked ``# error: <code>`` is one that
mypy reports with that code (tests/typed/test_types.py), and no other line is. Never run;
left out of the CI mypy run, which must pass."""

from __future__ import annotations

from uuid import UUID

from django.template import Context

from a2ui import agents
from a2ui.conf import a2ui_settings
from a2ui.models import Agent
from a2ui.sdk import AgentClient
from a2ui.templatetags.a2ui import a2ui_client


async def python_api(agent: Agent, session_id: UUID) -> None:
    await agents.arender(agent, session_id, "card", "not an object")  # error: arg-type
    seq: str = await agents.aupdate(agent, session_id, "c1", {})  # error: assignment
    pushed = await agents.anotify(agent, session_id, "Saved")
    pushed.warning  # error: union-attr
    await agents.arendr(agent, session_id, "card", {})  # error: attr-defined
    approval = await agents.aconfirm(agent, session_id, "Delete?", timeout_seconds="soon")  # error: arg-type
    approved: str = approval["approved"]  # error: assignment
    async for action in agents.surface_events(agent):
        action["method"]  # error: typeddict-item


def sync_twins(agent: Agent, session_id: UUID) -> None:
    agents.render(agent, session_id, "card")  # error: call-arg
    component_id: int = agents.render(agent, session_id, "card", {})  # error: assignment


async def sdk(client: AgentClient) -> None:
    await client.render("s", "card", {}, component_id=3)  # error: arg-type
    answer = await client.update("s", "c1", {})
    answer["sequence"]  # error: typeddict-item


def template_tag(context: Context) -> None:
    a2ui_client(context, chat="yes")  # error: arg-type


def settings() -> None:
    a2ui_settings.CONFIRM_TIMEOUT_SECOND  # error: attr-defined
    timeout: str = a2ui_settings.CONFIRM_TIMEOUT_SECONDS  # error: assignment
