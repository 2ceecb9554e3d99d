"""The session socket's lifecycle table (a2ui.core.lifecycle), without any I/O: every legal
transition, and that every other (state, event) pair raises."""

import itertools

import pytest

from a2ui.core import lifecycle
from a2ui.core.lifecycle import Event, IllegalTransition, Lifecycle, State

LEGAL = [
    (State.CONNECTED, Event.HANDSHAKE_RECEIVED, State.HANDSHAKING),
    (State.CONNECTED, Event.SESSION_OPENED, State.STREAMING),
    (State.CONNECTED, Event.CLOSE_REQUESTED, State.CLOSING),
    (State.CONNECTED, Event.DISCONNECTED, State.CLOSED),
    (State.HANDSHAKING, Event.HANDSHAKE_FAILED, State.CONNECTED),
    (State.HANDSHAKING, Event.SESSION_OPENED, State.STREAMING),
    (State.HANDSHAKING, Event.CLOSE_REQUESTED, State.CLOSING),
    (State.HANDSHAKING, Event.DISCONNECTED, State.CLOSED),
    (State.STREAMING, Event.CLOSE_REQUESTED, State.CLOSING),
    (State.STREAMING, Event.FINISHED, State.CLOSED),
    (State.STREAMING, Event.DISCONNECTED, State.CLOSED),
    (State.CLOSING, Event.DISCONNECTED, State.CLOSED),
]


@pytest.mark.parametrize("state, event, after", LEGAL)
def test_every_legal_transition(state, event, after):
    life = Lifecycle(state)
    assert life.can(event)
    assert life.fire(event) is after
    assert life.state is after


def test_the_table_is_exactly_the_legal_transitions():
    assert lifecycle.TRANSITIONS == {(s, e): a for s, e, a in LEGAL}


ILLEGAL = [(s, e) for s, e in itertools.product(State, Event)
           if (s, e) not in {(s2, e2) for s2, e2, _ in LEGAL}]


@pytest.mark.parametrize("state, event", ILLEGAL)
def test_every_other_transition_raises_and_changes_nothing(state, event):
    life = Lifecycle(state)
    assert not life.can(event)
    with pytest.raises(IllegalTransition) as raised:
        life.fire(event)
    assert raised.value.state is state and raised.value.event is event
    assert life.state is state
    assert life.fire_if(event) is False and life.state is state


def test_closed_is_final():
    assert not any(Lifecycle(State.CLOSED).can(e) for e in Event)


def test_a_socket_that_retries_its_handshake():
    life = Lifecycle()
    assert life.state is State.CONNECTED and not life.handshaking
    life.fire(Event.HANDSHAKE_RECEIVED)
    assert life.handshaking
    life.fire(Event.HANDSHAKE_FAILED)  # Redis away: the client's retry works
    life.fire(Event.HANDSHAKE_RECEIVED)
    life.fire(Event.SESSION_OPENED)
    assert life.streaming and not life.ending and not life.keeps_count


def test_a_session_close_keeps_the_count_a_finished_stream_does_not():
    closing = Lifecycle(State.STREAMING)
    assert closing.fire_if(Event.CLOSE_REQUESTED)
    assert closing.ending and closing.keeps_count
    assert not closing.fire_if(Event.CLOSE_REQUESTED)  # a second close order: said once
    closing.fire(Event.DISCONNECTED)
    assert closing.ending and not closing.keeps_count
    finished = Lifecycle(State.STREAMING)
    finished.fire(Event.FINISHED)
    assert finished.ending and not finished.keeps_count


def test_sans_io():
    import ast
    import inspect

    tree = ast.parse(inspect.getsource(lifecycle))
    imported = {alias.name.split(".")[0] for node in ast.walk(tree)
                if isinstance(node, ast.Import) for alias in node.names}
    imported |= {node.module.split(".")[0] for node in ast.walk(tree)
                 if isinstance(node, ast.ImportFrom) and node.module}
    assert imported <= {"enum"}
