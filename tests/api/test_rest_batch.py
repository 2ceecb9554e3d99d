"""POST /sessions/<id>/messages applies its list all or nothing, the stored state included."""

import pytest
from rest_framework.test import APIClient

from a2ui.models import A2UISessionLog, RenderedComponent

pytestmark = pytest.mark.django_db(transaction=True)


def rpc(method, **params):
    return {"jsonrpc": "2.0", "method": method, "params": params}


def card(title):
    return rpc("ui.render", component_id="c1", component_type="card", data={"title": title})


@pytest.fixture
def post(user, agent, agent_key):
    session = A2UISessionLog.objects.create(agent=agent, user=user, state="active")
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {agent_key}")

    def post(body):
        return client.post(f"/api/v4/sessions/{session.session_id}/messages", body,
                           format="json")
    post.session = session
    return post


def _stored(session):
    return {c.component_id: c.data for c in RenderedComponent.objects.filter(session=session)}


def _seq(post):
    response = post(rpc("ui.notify", level="info", title="t"))
    assert response.status_code == 202, response.content
    return response.json()["delivered"][0]["seq"]


def test_an_item_the_stored_state_refuses_changes_nothing(post):
    assert post(card("Old")).status_code == 202
    before, seq = _stored(post.session), _seq(post)
    response = post([
        rpc("ui.update", component_id="c1", operation="merge", data={"title": "New"}),
        rpc("ui.render", component_id="c2", component_type="card", data={"title": "Two"}),
        rpc("ui.notify", level="info", title="sent only with the batch"),
        rpc("ui.update", component_id="missing", operation="merge", data={"title": "x"}),
    ])
    assert response.status_code == 404, response.content
    error = response.json()["error"]
    assert error["data"]["index"] == 3 and error["data"]["component_id"] == "missing"
    assert _stored(post.session) == before  # neither the update nor the render stayed
    assert _seq(post) == seq + 1  # nothing of the batch was sent


def test_a_batch_sees_its_own_earlier_items(post):
    response = post([
        rpc("ui.render", component_id="c2", component_type="card", data={"title": "Two"}),
        rpc("ui.update", component_id="c2", operation="merge", data={"title": "Three"}),
        rpc("ui.notify", level="info", title="t"),
    ])
    assert response.status_code == 202, response.content
    seqs = [item["seq"] for item in response.json()["delivered"]]
    assert seqs == sorted(seqs) and len(set(seqs)) == 3
    assert _stored(post.session)["c2"]["title"] == "Three"
