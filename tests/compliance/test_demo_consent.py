"""Tier 1: the demo asks for a consent: the demo command makes ``data_collection`` required
for its server, and the demo agent's questions wait for it (and again after a revocation)."""

import asyncio

import pytest

from a2ui import demo
from a2ui.rpc.errors import ErrorCode, ProtocolError


class FakeClient:
    def __init__(self):
        self.toasts = []

    async def toast(self, sid, title, **kwargs):
        self.toasts.append(title)


async def test_questions_wait_for_consent_and_again_after_revocation():
    agent = demo.DemoAgent(FakeClient())
    calls = []

    async def request():
        calls.append(1)
        if not agent._consent("s1").is_set():
            raise ProtocolError(ErrorCode.CONSENT_REQUIRED, "Consent required",
                                {"consent_types": [demo.DEMO_CONSENT]})
        return "answer"

    task = asyncio.ensure_future(agent.ask("s1", request))
    await asyncio.sleep(0.05)
    assert not task.done() and len(calls) == 1
    assert agent.client.toasts == ["Waiting for your consent"]
    await agent.on_consent({"session_id": "s1", "consent_type": demo.DEMO_CONSENT,
                            "granted": True})
    assert await asyncio.wait_for(task, 2) == "answer" and len(calls) == 2
    await agent.on_consent({"session_id": "s1", "consent_type": demo.DEMO_CONSENT,
                            "granted": False})
    assert agent.client.toasts[-1] == "Consent revoked"
    task = asyncio.ensure_future(agent.ask("s1", request))
    await asyncio.sleep(0.05)
    assert not task.done()
    task.cancel()


async def test_other_errors_are_not_swallowed():
    agent = demo.DemoAgent(FakeClient())

    async def request():
        raise ProtocolError(ErrorCode.INVALID_PARAMS, "bad")

    with pytest.raises(ProtocolError):
        await agent.ask("s1", request)


def test_the_demo_consent_has_a_description():
    """The prompt shows it (the demo browser test sees it end to end, tests/browser)."""
    from a2ui.conf import a2ui_settings

    assert demo.DEMO_CONSENT in a2ui_settings.CONSENT_DESCRIPTIONS
