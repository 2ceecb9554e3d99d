"""Remote agents in the adapter registry: no clients and no routes of their own (an upstream
agent is reached by ``a2ui.remote.runtime``, diverted to by ``a2ui.services.groups``); what
the registry gives them is the start hook: the agents of ``A2UI['AGENTS']`` registered."""

from a2ui.core.adapters import Adapter


def _on_start():
    from a2ui.remote import registry

    registry.sync_in_process_safely()


ADAPTER = Adapter(
    name="remote",
    on_start=_on_start,
    summary="Remote agents (AG-UI 1.0, A2A with the A2UI extension, in-process AG-UI apps) "
            "run for the people of their sessions: docs/remote-agents.md",
)
