"""Sans-I/O: an agent's reasoning (a remote agent's REASONING_* events, kept as a message
marked ``metadata.reasoning`` when REMOTE_AGENT_SHOW_REASONING is on) reaches an AG-UI 1.0
client as AG-UI's own reasoning events, streamed like a text message, never as chat text."""

import itertools
import json

from ag_ui.encoder import EventEncoder
from ag_ui_validate.pytest_plugin import validate_agui

from a2ui.agui1.translate import Run

ENCODER = EventEncoder()


def wire(events):
    return [json.loads(ENCODER.encode(e)[len("data: "):]) for e in events]


def new_run():
    counter = itertools.count(1)
    return Run("t", "r", make_id=lambda: f"id{next(counter)}")


def thought(content, streaming):
    metadata = {"reasoning": True, **({"streaming": True} if streaming else {})}
    return {"message_id": "reasoning-m1", "role": "agent", "sender": "agent",
            "content": content, "metadata": metadata}


def test_streamed_reasoning_is_reasoning_events():
    run = new_run()
    events = run.start()
    events += run.translate("message", thought("Let me", True))
    events += run.translate("message", thought("Let me think", True))
    events += run.translate("message", thought("Let me think.", False))
    events += run.translate("message", {"message_id": "m2", "role": "agent", "sender": "agent",
                                        "content": "The answer is 4."})
    events += run.finish()
    shown = wire(events)
    types = [e["type"] for e in shown if e["type"].startswith(("REASONING", "TEXT"))]
    assert types == ["REASONING_START", "REASONING_MESSAGE_START",
                     "REASONING_MESSAGE_CONTENT", "REASONING_MESSAGE_CONTENT",
                     "REASONING_MESSAGE_CONTENT", "REASONING_MESSAGE_END", "REASONING_END",
                     "TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END"]
    deltas = [e["delta"] for e in shown if e["type"] == "REASONING_MESSAGE_CONTENT"]
    assert "".join(deltas) == "Let me think."
    text = [e["delta"] for e in shown if e["type"] == "TEXT_MESSAGE_CONTENT"]
    assert text == ["The answer is 4."]  # the reasoning is not chat text
    report = validate_agui(shown, features=["agentic-chat"])
    assert not [d for d in report.diagnostics if d.severity in ("error", "warning")]


def test_reasoning_cut_by_the_end_of_the_run_is_closed_as_reasoning():
    run = new_run()
    events = run.start() + run.translate("message", thought("Hmm", True)) + run.finish()
    types = [e["type"] for e in wire(events)]
    assert "REASONING_MESSAGE_END" in types and "REASONING_END" in types
    assert "TEXT_MESSAGE_END" not in types
    report = validate_agui(wire(events), features=["agentic-chat"])
    assert not [d for d in report.diagnostics if d.severity in ("error", "warning")]


def test_a_finished_reasoning_in_the_transcript_is_replayed_as_reasoning():
    run = new_run()
    events = run.translate("message", thought("Because.", False))
    assert [e["type"] for e in wire(events) if e["type"].startswith("REASONING")] == [
        "REASONING_START", "REASONING_MESSAGE_START", "REASONING_MESSAGE_CONTENT",
        "REASONING_MESSAGE_END", "REASONING_END"]
