"""The demo agent: its form result card names the fields by their labels, not their keys; its
walkthrough ends as the person decided."""

from a2ui.demo import FORM_LABELS, DemoAgent


class RecordingClient:
    def __init__(self):
        self.rendered = []

    async def render(self, session_id, kind, data, **kwargs):
        self.rendered.append((session_id, kind, data))


async def test_form_result_shows_field_labels():
    client = RecordingClient()
    await DemoAgent(client).on_form({"session_id": "s1", "request_id": "form", "value": {
        "query": "solar", "max_price": 12, "category": None, "extra": "x"}})
    [(sid, kind, data)] = client.rendered
    assert (sid, kind, data["title"]) == ("s1", "card", "Form received")
    assert data["sections"] == [
        {"label": "Search Query", "value": "solar"},
        {"label": "Max Price (USD)", "value": "12"},
        {"label": "Category", "value": "—"},  # nothing chosen
        {"label": "extra", "value": "x"},  # a key the form does not have: as it came
    ]
    assert FORM_LABELS == {"query": "Search Query", "max_price": "Max Price (USD)",
                           "category": "Category"}


class WalkClient:
    """Answers the walkthrough's calls; the person declines (or approves) the purchase."""

    def __init__(self, approved):
        self.approved = approved
        self.updates = []
        self.rendered = []
        self.asked = []  # the request ids of its questions
        self.activity = []  # (idempotency key, AG-UI event)

    async def render(self, session_id, kind, data, **kwargs):
        self.rendered.append(kwargs.get("component_id"))
        return kwargs.get("component_id") or f"c-{kind}"

    async def update(self, session_id, component_id, data, **kwargs):
        self.updates.append((component_id, data))

    async def request_input(self, *args, **kwargs):
        self.asked.append(kwargs.get("request_id"))
        return "solar panels"

    async def confirm(self, *args, **kwargs):
        self.asked.append(kwargs.get("request_id"))
        return {"approved": self.approved}

    async def toast(self, *args, **kwargs):
        pass

    async def progress(self, *args, **kwargs):
        pass

    async def surfaces(self, *args, **kwargs):
        pass

    async def agui_event(self, session_id, event, *, idempotency_key=None):
        self.activity.append((idempotency_key, event))


async def test_a_declined_purchase_does_not_complete_the_report_step():
    for approved, status in ((False, "error"), (True, "completed")):
        client = WalkClient(approved)
        await DemoAgent(client).walkthrough("s1")
        component_id, last = client.updates[-1]
        assert component_id == "demo-steps"
        assert last["steps"][-1]["label"] == "Report Generation"
        assert last["steps"][-1]["status"] == status, approved


async def test_a_person_who_comes_back_is_walked_through_again_in_place():
    client = WalkClient(True)
    agent = DemoAgent(client)
    await agent.on_session({"session_id": "s1"})
    await agent.on_resumed({"session_id": "s1"})  # a reload during the walk: no second walk
    await agent.running["s1"]
    first = list(client.rendered)
    assert None not in first and len(first) == len(set(first))  # fixed ids, each once
    await agent.on_resumed({"session_id": "s1"})  # a reload after it: walked again
    await agent.running["s1"]
    assert client.rendered == first + first  # the same components, replaced in place
    await agent.on_session({"session_id": "s1"})  # listed when the agent reconnects: not again
    assert agent.running["s1"].done() and client.rendered == first + first


async def test_the_walk_keeps_the_chat_and_activity_beside_the_cards_each_event_keyed():
    """Every kind of AG-UI activity, each under a key of its own (a second walk shows nothing
    twice), and questions under ids of their own (asked again, never a second question)."""
    client = WalkClient(True)
    await DemoAgent(client).walkthrough("s1")
    keys = [key for key, _ in client.activity]
    assert None not in keys and len(keys) == len(set(keys))
    kinds = {event["type"] for _, event in client.activity}
    assert kinds == {"TEXT_MESSAGE", "AGENT_ROSTER", "PLAN_CARD", "RESOURCE_TREE", "STATE_DELTA",
                     "TOOL_CALL_REQUEST", "TOOL_CALL_STATUS", "TOOL_CALL_RESULT", "ARTIFACT_OPEN"}
    assert client.asked == ["demo-topic", "demo-purchase"]
