"""The lifecycles of sessions, pending requests and runs as transition tables
(a2ui.core.states), and the rows written through them."""

import pytest

from a2ui.core import states
from a2ui.core.states import REQUESTS, RUNS, SESSIONS, IllegalTransition, Table


@pytest.mark.parametrize(("table", "model", "field"), [
    (SESSIONS, "A2UISessionLog", "state"),
    (REQUESTS, "PendingRequest", "status"),
    (RUNS, "AgentRun", "status"),
])
def test_each_table_names_exactly_its_models_states(table, model, field):
    from a2ui import models

    choices = {value for value, _ in getattr(models, model)._meta.get_field(field).choices}
    assert set(table.states) == choices


def test_the_live_states_are_derived_from_the_table():
    from a2ui.models import A2UISessionLog

    assert set(A2UISessionLog.LIVE_STATES) == set(SESSIONS.live)
    assert set(SESSIONS.final) == {"closed", "timed_out", "rejected"}
    # the partial unique index of live sessions (a migration) names the same states
    (constraint,) = A2UISessionLog._meta.constraints
    named = [child for child in constraint.condition.children
             if isinstance(child, tuple) and child[0] == "state__in"]
    assert [set(states) for _, states in named] == [set(SESSIONS.live)]


def test_sources_and_target_of_an_event():
    assert SESSIONS.sources("close") == ("connected", "initialized", "active")
    assert SESSIONS.target("close") == "closed"
    assert SESSIONS.into("timed_out") == "time_out"
    assert SESSIONS.sources("first_push") == ("initialized",)
    assert REQUESTS.sources(REQUESTS.into("answered")) == ("pending",)
    assert RUNS.next("running", "fail") == "error"


@pytest.mark.parametrize(("table", "state", "event"), [
    (SESSIONS, "closed", "close"), (SESSIONS, "active", "first_push"),
    (REQUESTS, "answered", "cancel"), (RUNS, "finished", "finish"),
])
def test_an_ended_row_cannot_move(table, state, event):
    assert not table.can(state, event)
    with pytest.raises(IllegalTransition):
        table.next(state, event)


def test_unknown_events_and_states_are_refused():
    with pytest.raises(IllegalTransition):
        RUNS.sources("explode")
    with pytest.raises(IllegalTransition):
        RUNS.into("exploded")


def test_a_table_whose_event_leads_to_two_states_is_refused():
    with pytest.raises(ValueError, match="two states"):
        Table("bad", "a", {("a", "go"): "b", ("b", "go"): "c"})
    with pytest.raises(ValueError, match="two events"):
        Table("bad", "a", {("a", "go"): "b", ("a", "run"): "b"})
    assert states.Table("ok", "a", {("a", "go"): "b"}).final == ("b",)


@pytest.mark.django_db(transaction=True)
def test_a_closed_session_is_not_closed_again_and_its_requests_are_cancelled(
        django_user_model):
    from datetime import timedelta

    from django.utils import timezone

    from a2ui.models import A2UISessionLog, PendingRequest
    from a2ui.sessions import lifecycle

    user = django_user_model.objects.create(username="states")
    session = A2UISessionLog.objects.create(user=user, state="initialized")
    PendingRequest.objects.create(session=session, request_id="r", kind="input",
                                  deadline=timezone.now() + timedelta(minutes=1))
    _, cancelled = lifecycle.close_session(session.pk, "timed_out", "idle")
    assert [c["request_id"] for c in cancelled] == ["r"]
    assert PendingRequest.objects.get().status == "cancelled"
    assert lifecycle.close_session(session.pk, "closed", "again") is None  # ended is final
    assert A2UISessionLog.objects.get().state == "timed_out"
