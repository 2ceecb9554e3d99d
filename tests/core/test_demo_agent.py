"""The demo agent's form result card names the fields by their labels, not their keys."""

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
