"""Tier 1: once a person's data is erased, no writer writes to her sessions again
(``a2ui.sessions.fence``): the push store refuses (-32001), a run does not start, the replay
log drops the events a process still held; another person's session is not concerned."""

import pytest
from django.db import transaction

from a2ui import tokens
from a2ui.compliance import person
from a2ui.compliance import replay as replaylog
from a2ui.core.errors import DomainError, Fault
from a2ui.models import A2UISessionLog, AgentRun, RenderedComponent, SessionEvent
from a2ui.push import revocation, store
from a2ui.runs import records
from a2ui.sessions import fence
from a2ui.surfaces import components

pytestmark = pytest.mark.django_db(transaction=True)  # the erasure closes on another thread
CARD = {"component_id": "c", "component_type": "card", "data": {"title": "hers"}}


def session_of(user, agent):
    record = tokens.issue_stream_token(user, agent).record
    return A2UISessionLog.objects.create(user=user, agent=agent, token=record, state="active")


def test_nothing_is_written_to_an_erased_session(user, other_user, agent):
    hers, his = session_of(user, agent), session_of(other_user, agent)
    store.in_session(components.store_render, hers.pk, CARD)
    replaylog.buffer.add(hers.pk, 1, "component.rendered", CARD)  # held by "another process"
    pending = replaylog.buffer._rows[:]
    replaylog.buffer.clear()
    revocation.erase_person(user)
    assert A2UISessionLog.objects.get(pk=hers.pk).erased_at is not None

    with pytest.raises(DomainError) as info:
        store.in_session(components.store_render, hers.pk, CARD)
    assert info.value.fault == Fault.SESSION_NOT_FOUND
    with pytest.raises(DomainError):
        records.start(hers.pk, "run-1", "t", {})
    replaylog._write(pending + [(his.pk, 1, "component.rendered", CARD, pending[0][4])])
    assert not SessionEvent.objects.filter(session_id=hers.pk).exists()
    assert not RenderedComponent.objects.filter(session_id=hers.pk).exists()
    assert not AgentRun.objects.filter(session_id=hers.pk).exists()
    # another person's session is written as before
    store.in_session(components.store_render, his.pk, CARD)
    assert RenderedComponent.objects.filter(session_id=his.pk).exists()
    assert SessionEvent.objects.filter(session_id=his.pk).count() == 1


def test_close_runs_only_in_the_erasures_transaction(user, agent):
    with pytest.raises(RuntimeError):
        fence.close([session_of(user, agent).pk])
    with transaction.atomic():
        assert fence.close([]) == 0


def test_a_deadlock_named_by_the_database_is_taken_again(user, agent, monkeypatch):
    from django.db import OperationalError

    session_of(user, agent)
    real, calls = person._erase_held, []

    class Deadlock(Exception):
        sqlstate = "40P01"

    def once_deadlocked(*args):
        calls.append(1)
        if len(calls) == 1:
            raise OperationalError("deadlock detected") from Deadlock()
        return real(*args)

    monkeypatch.setattr(person, "_erase_held", once_deadlocked)
    report = revocation.erase_person(user)
    assert len(calls) == 2 and report.left == {} and report.counts["sessions"] == 1
