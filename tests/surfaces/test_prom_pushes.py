"""A real push over two protocols (an AG-UI socket and a v0.9 socket on one session) shows in
the Prometheus scrape per protocol: pushes counted and latency observed for each, the session
counted under each protocol attached, a bad frame refused on each counted under its code
(``a2ui.infra.prom``; docs/operations.md "Metrics")."""

import pytest

from a2ui.infra import prom
from tests.agui.test_agui_socket import _issue, connected, event_of, open_agui
from tests.promutil import samples, scrape, value
from tests.surfaces.helpers import booking, create, frames, push, v09_socket
from tests.surfaces.test_capabilities import _stream_token
from tests.wsutil import connect_agent, recv

pytestmark = pytest.mark.django_db(transaction=True)


def pushes(protocol):
    got = samples(prom.exposition()[1])
    return (got.get(("a2ui_pushes_total", (("protocol", protocol),)), 0),
            got.get(("a2ui_push_latency_seconds_count", (("protocol", protocol),)), 0))


async def test_pushes_over_two_protocols_show_in_the_scrape(metrics_on, user, agent, agent_key):
    bot = await connect_agent(agent_key)
    person = await open_agui(await _issue(user, agent))
    sid = await connected(person)
    reply = await push(bot, sid, booking())
    assert reply["result"]["clients"] == {"agui": 1}, reply
    assert pushes("agui") == (1, 1) and pushes("v09") == (0, 0)
    v09, _ = await v09_socket(await _stream_token(user, agent), session_id=sid)
    await frames(v09, 3)
    for n in range(3):
        reply = await push(bot, sid, [create(f"s{n + 2}")], f"p{n + 2}")
        assert reply["result"]["clients"] == {"agui": 1, "v09": 1}, reply
        assert (await recv(v09))["createSurface"]["surfaceId"] == f"s{n + 2}"
    assert pushes("agui") == (4, 4) and pushes("v09") == (3, 3)
    got = scrape()
    assert value(got, "a2ui_sessions", protocol="agui") == 1  # one session, two protocols
    assert value(got, "a2ui_sessions", protocol="v09") == 1

    await v09.send_to(text_data="not json")  # refused inputs, per protocol and code
    assert (await recv(v09))["error"]["code"] == "PARSE_ERROR"
    await person.send_to(text_data="not json")
    event = await event_of(person)
    while event["type"] != "ERROR":  # the pushes' events before it
        event = await event_of(person)
    assert event["code"] == "PARSE_ERROR"
    got = scrape()
    assert value(got, "a2ui_refused_inputs_total", protocol="v09", reason="parse_error") == 1
    assert value(got, "a2ui_refused_inputs_total", protocol="agui", reason="parse_error") == 1

    await v09.disconnect()
    assert value(scrape(), "a2ui_sessions", protocol="v09") == 0
    await person.disconnect()
    assert value(scrape(), "a2ui_sessions", protocol="agui") == 0
    await bot.disconnect()
