"""AG-UI 1.0 over HTTP + SSE for people: POST /api/v4/agui/run (docs/protocol-agui.md)."""

from a2ui.agui1 import TOKEN_TYPE
from a2ui.conf import env_int
from a2ui.core.adapters import Adapter
from a2ui.core.events import Kind


def _http_urls():
    from django.urls import path

    from a2ui.agui1 import api
    from a2ui.agui1.view import run_view

    # The agent's side of runs (REST, agent key): a2ui.agui1.api.
    runs = "api/v4/sessions/<uuid:session_id>/runs/"
    return [path("api/v4/agui/run", run_view, name="a2ui-agui-run"),
            path("api/v4/agui/runs", api.AgentRunsView.as_view(), name="a2ui-agent-runs"),
            path(f"{runs}finish", api.RunFinishView.as_view(), name="a2ui-run-finish"),
            path(f"{runs}error", api.RunErrorView.as_view(), name="a2ui-run-error")]


def _call(name):
    async def call(*args, **kwargs):
        from a2ui.agui1 import runs

        return await getattr(runs, name)(*args, **kwargs)

    return call


def _validate(params):
    from a2ui.agui1 import runs

    return runs.agent_params(params)


def _listing(params):
    """``agui.runs``: ``(session_id or None, {})`` (of one session, or every one)."""
    return (params.get("session_id") if isinstance(params, dict) else None), {}


def _agent_methods():
    from a2ui.core.agentmethods import AgentMethod

    # REST: the protocol's own routes (200, a GET listing: a2ui.agui1.api).
    return (AgentMethod("agui.run_finish", _validate, _call("finish_call"), shape="result",
                        keyed=False, tool="finish_run", sdk="afinish_run", rest="runs/finish",
                        rest_routed=True),
            AgentMethod("agui.run_error", _validate, _call("error_call"), shape="result",
                        keyed=False, tool="fail_run", sdk="aerror_run", rest="runs/error",
                        rest_routed=True),
            AgentMethod("agui.runs", _listing, _call("running_call"), shape="list",
                        keyed=False, socket=False, tool="list_runs", sdk="aruns", rest="runs",
                        rest_routed=True))


async def _sweep():
    """End the runs whose stream was lost with its process (their lease lapsed):
    ``agui.run_ended`` (``stream_lost``) for each."""
    from a2ui.agui1 import runs

    await runs.aend_lost()


#: The A2UI settings only AG-UI 1.0 reads (docs/settings.md). Run inputs: clients resend the
#: whole history on every run; of the trailing user and tool messages the session has not
#: seen, at most AGUI_MAX_NEW_MESSAGES (the last ones) are new: sent to the agent and added
#: to the transcript, as one batch. Resumption: a run whose client went goes on for
#: AGUI_RESUME_SECONDS for a client that comes back with Last-Event-ID (its log is kept as
#: long after the run's end).
SETTINGS_DEFAULTS = {
    "AGUI_MAX_NEW_MESSAGES": 50,
    "AGUI_RESUME_SECONDS": 30,
    # A run with no event from the agent for this long ends with RUN_ERROR (code RUN_TIMEOUT);
    # keepalive comments go out this often.
    "AGUI_RUN_TIMEOUT_SECONDS": env_int("A2UI_AGUI_RUN_TIMEOUT_SECONDS", 300),
    "AGUI_KEEPALIVE_SECONDS": env_int("A2UI_AGUI_KEEPALIVE_SECONDS", 15),
    # The lease a run's stream holds in Redis, refreshed every third of it by the process
    # serving it. A run whose lease lapsed lost its stream (its process died): the thread's
    # next run or the housekeeping sweep ends it and tells the agent.
    "AGUI_RUN_LEASE_SECONDS": env_int("A2UI_AGUI_RUN_LEASE_SECONDS", 6),
}


ADAPTER = Adapter(
    name="agui1",
    settings_defaults=SETTINGS_DEFAULTS,
    agent_methods=_agent_methods,
    token_type=TOKEN_TYPE,
    http_urls=_http_urls,
    sweep=_sweep,
    kinds=frozenset(Kind),  # every kind: each has an AG-UI 1.0 form (a2ui.agui1.translate)
    summary="AG-UI 1.0 runs over HTTP + SSE (RunAgentInput in, AG-UI events out): "
            "docs/protocol-agui.md",
)
