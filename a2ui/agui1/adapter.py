"""AG-UI 1.0 over HTTP + SSE for people: POST /api/v4/agui/run (docs/protocol-agui.md)."""

from a2ui.core.adapters import Adapter
from a2ui.core.events import Kind


def _http_urls():
    from django.urls import path

    from a2ui.agui1.view import run_view

    return [path("api/v4/agui/run", run_view, name="a2ui-agui-run")]


def _agent_methods():
    from a2ui.core.agentmethods import AgentMethod

    return (AgentMethod("agui.run_finish", shape="result", keyed=False, tool="finish_run",
                        sdk="afinish_run", rest="runs/finish"),
            AgentMethod("agui.run_error", shape="result", keyed=False, tool="fail_run",
                        sdk="aerror_run", rest="runs/error"),
            AgentMethod("agui.runs", shape="list", keyed=False, socket=False, tool="list_runs",
                        sdk="aruns", rest="runs"))


async def _sweep():
    """End the runs whose stream was lost with its process (their lease lapsed):
    ``agui.run_ended`` (``stream_lost``) for each."""
    from a2ui.runs import records as runs

    await runs.aend_lost()


#: The A2UI settings only AG-UI 1.0 reads (docs/settings.md). Run inputs: clients resend the
#: whole history on every run; of the trailing user and tool messages the session has not
#: seen, at most AGUI_MAX_NEW_MESSAGES (the last ones) are new: sent to the agent and added
#: to the transcript, as one batch. Resumption: a run whose client went goes on for
#: AGUI_RESUME_SECONDS for a client that comes back with Last-Event-ID (its log is kept as
#: long after the run's end).
SETTINGS_DEFAULTS = {"AGUI_MAX_NEW_MESSAGES": 50, "AGUI_RESUME_SECONDS": 30}


ADAPTER = Adapter(
    name="agui1",
    settings_defaults=SETTINGS_DEFAULTS,
    agent_methods=_agent_methods,
    token_type="stream_agui",
    http_urls=_http_urls,
    sweep=_sweep,
    kinds=frozenset(Kind),  # every kind: each has an AG-UI 1.0 form (a2ui.agui1.translate)
    summary="AG-UI 1.0 runs over HTTP + SSE (RunAgentInput in, AG-UI events out): "
            "docs/protocol-agui.md",
)
