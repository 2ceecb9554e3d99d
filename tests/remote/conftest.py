import pytest


@pytest.fixture
def remote_agent(db, settings):
    """An in-process AG-UI agent (``A2UI['AGENTS']``) named ``shop``, run by ``tests.remote.
    agents.<function>``: ``remote_agent("echo")``."""
    from a2ui.remote import agents, registry

    def make(function="echo", name="shop", **extra):
        settings.A2UI = {**getattr(settings, "A2UI", {}),
                         "AGENTS": {name: function if ":" in function
                                    else f"tests.remote.agents:{function}"}, **extra}
        registry.sync_in_process()
        agents.forget()
        from a2ui.models import Agent

        return Agent.objects.get(name=name)

    yield make
    agents.forget()


@pytest.fixture
def person_token(user):
    from a2ui import tokens

    def make(agent):
        return tokens.issue_stream_token(user, agent).token

    return make
