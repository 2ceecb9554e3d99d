"""a2ui.core.presence: the agent presence state machine, without I/O."""

import pytest

from a2ui.core.presence import OFFLINE, ONLINE, Presence
from a2ui.jsonrpc import events as wire

TTL = 15


def test_first_member_turns_the_agent_online_last_leave_offline():
    p = Presence()
    assert p.status("a", 0) == OFFLINE
    assert p.join("a", "s1", 0, TTL) == ONLINE
    assert p.join("a", "s2", 1, TTL) is None  # already online
    assert p.status("a", 2) == ONLINE
    assert p.leave("a", "s1", 3) is None  # s2 is still there
    assert p.leave("a", "s2", 4) == OFFLINE
    assert p.status("a", 4) == OFFLINE
    assert p.agents == {}


def test_agents_are_apart():
    p = Presence()
    assert p.join("a", "s1", 0, TTL) == ONLINE
    assert p.join("b", "s2", 0, TTL) == ONLINE
    assert p.leave("a", "s1", 1) == OFFLINE
    assert p.status("b", 1) == ONLINE


def test_a_member_leaving_twice_or_unknown_changes_nothing():
    p = Presence()
    assert p.leave("a", "nobody", 0) is None
    p.join("a", "s1", 0, TTL)
    assert p.leave("a", "s1", 1) == OFFLINE
    assert p.leave("a", "s1", 2) is None


def test_refresh_keeps_a_member_live():
    p = Presence()
    p.join("a", "s1", 0, TTL)
    for now in range(5, 60, 5):
        assert p.refresh("a", "s1", now, TTL) is None
        assert p.sweep(now) == []
    assert p.status("a", 60) == ONLINE


def test_a_lapsed_member_is_swept_once_and_the_agent_told_offline():
    p = Presence()
    p.join("a", "killed", 0, TTL)
    assert p.sweep(TTL - 1) == []
    assert p.status("a", TTL) == OFFLINE  # lapsed: no longer counts, even before the sweep
    assert p.sweep(TTL) == ["a"]
    assert p.sweep(TTL + 5) == []  # once


def test_the_last_of_several_lapsed_members_turns_the_agent_offline():
    p = Presence()
    p.join("a", "k1", 0, TTL)
    p.join("a", "k2", 2, TTL)
    p.join("a", "live", 0, TTL)
    assert p.sweep(TTL) == []  # k1 lapsed; k2 and live remain
    assert p.leave("a", "live", TTL + 1) is None  # k2 still live
    assert p.sweep(TTL + 2) == ["a"]


def test_a_lapsed_member_does_not_keep_an_agent_online():
    p = Presence()
    p.join("a", "killed", 0, TTL)
    # Before any sweep: a new member finds no live one, so it is the first again.
    assert p.join("a", "new", TTL + 1, TTL) == ONLINE
    assert p.sweep(TTL + 2) == []  # the lapsed one was dropped quietly
    # The last live member leaves while a lapsed one was never swept: offline.
    p.join("a", "killed2", TTL + 2, 1)
    assert p.leave("a", "new", TTL + 10) == OFFLINE
    assert p.sweep(TTL + 11) == []


def test_a_member_that_lapsed_and_refreshes_turns_the_agent_online_again():
    p = Presence()
    p.join("a", "slow", 0, TTL)
    assert p.sweep(TTL + 1) == ["a"]  # its process paused past the TTL
    assert p.refresh("a", "slow", TTL + 2, TTL) == ONLINE


def test_the_notification():
    assert wire.agent_status(ONLINE) == {"jsonrpc": "2.0", "method": "a2ui.agent_status",
                                         "params": {"status": "online"}}
    assert wire.agent_status(OFFLINE)["params"] == {"status": "offline"}
    with pytest.raises(ValueError):
        wire.agent_status("busy")
