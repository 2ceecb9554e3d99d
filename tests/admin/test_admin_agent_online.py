"""The admin's agent list has an "online" column: whether the agent has a socket, listener or
MCP listen stream open (a2ui.sessions.presence), read once per page."""

import pytest
from asgiref.sync import async_to_sync

from a2ui import tokens
from a2ui.sessions import presence

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def fresh_presence():
    presence.clear()
    yield
    presence.clear()


def test_the_agent_list_says_which_agents_are_online(client, superuser, agent):
    other, _ = tokens.create_agent("quiet-agent")
    async_to_sync(presence.ajoin)(agent.pk, "test-channel-1")
    client.force_login(superuser)
    page = client.get("/admin/a2ui/agent/")
    assert page.status_code == 200
    html = page.content.decode()
    assert '<th class="column-online">' in html or 'class="column-online' in html
    rows = {row.split('href="/admin/a2ui/agent/', 1)[1].split("/", 1)[0]: row
            for row in html.split("<tr")[1:] if 'href="/admin/a2ui/agent/' in row}
    online = rows[str(agent.pk)].split('class="field-online"', 1)[1].split("</td>", 1)[0]
    quiet = rows[str(other.pk)].split('class="field-online"', 1)[1].split("</td>", 1)[0]
    assert 'alt="True"' in online and 'alt="False"' in quiet
    async_to_sync(presence.aleave)("test-channel-1")
    html = client.get("/admin/a2ui/agent/").content.decode()
    cells = [part.split("</td>", 1)[0] for part in html.split('class="field-online"')[1:]]
    assert len(cells) == 2 and all('alt="False"' in cell for cell in cells)
