"""The per-message statements in SQL (``a2ui.infra.sql`` and the domains' statements) and the pool threads that keep
their connection (``a2ui.infra.dbthreads``): what the ORM did, they must do, on SQLite and
PostgreSQL alike."""

import threading
import uuid

import pytest
from channels.db import database_sync_to_async
from django.contrib.auth import get_user_model
from django.db import IntegrityError, InterfaceError, OperationalError, connection

from a2ui.core.errors import DomainError, Fault
from a2ui.infra import dbthreads, sql
from a2ui.models import A2UISessionLog, PendingRequest, RenderedComponent
from a2ui.push import store
from a2ui.requests import pending
from a2ui.requests import sql as request_sql
from a2ui.surfaces import components
from a2ui.surfaces import sql as component_sql

pytestmark = pytest.mark.django_db(transaction=True)

CARD = {"component_id": "c", "component_type": "card", "metadata": {},
        "data": {"title": "T", "description": "first"}}


def _session(**kwargs):
    user = get_user_model().objects.create(username=f"u{uuid.uuid4().hex[:8]}")
    return A2UISessionLog.objects.create(user=user, state="active", **kwargs).session_id


def _update_racing(monkeypatch, after_read, description):
    """Render ``c``, then ``ui.update`` it with ``after_read(for_update)`` run right after each
    of the update's reads (another process acting between its read and its write); the
    stored data."""
    sid = _session()
    components.store_render(sid, CARD)
    read = component_sql.component

    def read_then(session_id, component_id, *, for_update=False):
        row = read(session_id, component_id, for_update=for_update)
        after_read(sid, for_update)
        return row

    monkeypatch.setattr(component_sql, "component", read_then)
    components.store_update(sid, {"component_id": "c", "operation": "merge",
                                  "data": {"description": description}})
    return RenderedComponent.objects.get(session_id=sid, component_id="c").data


def test_an_update_applies_to_what_a_concurrent_render_left(monkeypatch):
    """Between the update's read and its write another process re-renders the component: the
    write misses (compare-and-set) and the update is applied to the new data, not lost and
    not applied to the old."""
    raced = []

    def render_once(sid, for_update):
        if not raced:
            raced.append(True)
            components.store_render(sid, {**CARD, "data": {"title": "New", "description": "x"}})

    data = _update_racing(monkeypatch, render_once, "merged")
    assert raced and data == {"title": "New", "description": "merged"}


def test_an_update_that_keeps_losing_the_race_takes_the_row_lock(monkeypatch):
    locked = []

    def render_unless_locked(sid, for_update):
        if for_update:
            locked.append(True)
        else:  # every compare-and-set misses
            components.store_render(sid, {**CARD, "data": {"title": "Again"}})

    data = _update_racing(monkeypatch, render_unless_locked, "locked")
    assert locked == [True]
    assert data == {"title": "Again", "description": "locked"}


def test_an_expired_component_is_not_updated():
    sid = _session()
    components.store_render(sid, {**CARD, "metadata": {"ttl_seconds": 60}})
    RenderedComponent.objects.filter(session_id=sid).update(
        expires_at="2000-01-01T00:00:00Z")
    with pytest.raises(DomainError) as caught:
        components.store_update(sid, {"component_id": "c", "operation": "merge",
                                      "data": {"description": "late"}})
    assert caught.value.fault is Fault.COMPONENT_NOT_FOUND
    assert RenderedComponent.objects.get(session_id=sid).data["description"] == "first"


def test_new_components_go_last_and_a_re_render_keeps_its_place():
    sid = _session()
    for cid in ("a", "b", "c"):
        components.store_render(sid, {**CARD, "component_id": cid})
    first = RenderedComponent.objects.get(session_id=sid, component_id="a")
    components.store_render(sid, {**CARD, "component_id": "a", "component_type": "text",
                                  "data": {"content": "again"},
                                  "metadata": {"ttl_seconds": 60}})
    rows = list(RenderedComponent.objects.filter(session_id=sid).order_by("position"))
    assert [(r.component_id, r.position) for r in rows] == [("a", 1), ("b", 2), ("c", 3)]
    again = rows[0]
    assert again.created_at == first.created_at and again.updated_at > first.updated_at
    assert (again.component_type, again.data) == ("text", {"content": "again"})
    assert again.metadata == {"ttl_seconds": 60} and again.expires_at > again.updated_at
    other = _session()  # positions are per session
    components.store_render(other, CARD)
    assert RenderedComponent.objects.get(session_id=other).position == 1


def test_a_new_component_rendered_meanwhile_elsewhere_is_replaced_in_its_place(monkeypatch):
    """The render's UPDATE misses, then another process inserts the same component before the
    render's INSERT: the INSERT turns into the update (no IntegrityError, no second row)."""
    sid = _session()
    components.store_render(sid, {**CARD, "component_id": "first"})
    update = component_sql.update_component

    def missed_while_another_renders(session_id, component_id, fields, expect=None):
        changed = update(session_id, component_id, fields, expect)
        if not changed:
            RenderedComponent.objects.create(session_id=session_id, component_id=component_id,
                                             component_type="card", position=7,
                                             data={"title": "theirs"})
        return 0

    monkeypatch.setattr(component_sql, "update_component", missed_while_another_renders)
    components.store_render(sid, {**CARD, "data": {"title": "ours"}})
    row = RenderedComponent.objects.get(session_id=sid, component_id="c")
    assert (row.position, row.data) == (7, {"title": "ours"})


@pytest.mark.parametrize("batch", [False, True])
@pytest.mark.parametrize("kind, data", [
    ("COMPONENT_RENDERED", {**CARD, "component_id": "x"}),
    ("PLAN", {"plan_id": "p", "title": "t", "content": "c", "status": "ACTIVE"}),
])
def test_an_event_stored_into_a_session_deleted_meanwhile_is_session_not_found(
        batch, kind, data):
    """Its rows' foreign key fails at the statement (autocommit) or at the commit (a batch's
    transaction; the constraints are deferred): -32001, nothing stored, not -32603."""
    from a2ui.core.events import Kind
    from a2ui.models import SessionActivity

    kind = Kind[kind]
    sid = _session()
    A2UISessionLog.objects.filter(session_id=sid).delete()
    with pytest.raises(DomainError) as caught:
        if batch:
            store.in_session(store.apply_all, sid, [(kind, data), (kind, data)])
        else:
            store.in_session(store.apply, sid, kind, data)
    assert caught.value.fault is Fault.SESSION_NOT_FOUND
    assert not RenderedComponent.objects.filter(session_id=sid).exists()
    assert not SessionActivity.objects.filter(session_id=sid).exists()


def test_a_batch_renders_new_components_in_one_transaction():
    from django.db import transaction

    sid = _session()
    with transaction.atomic():
        components.store_render(sid, {**CARD, "component_id": "x"})
        components.store_render(sid, {**CARD, "component_id": "y"})
        components.store_render(sid, {**CARD, "component_id": "x", "data": {"title": "2"}})
    rows = RenderedComponent.objects.filter(session_id=sid).order_by("position")
    assert [(r.component_id, r.position, r.data.get("title")) for r in rows] == [
        ("x", 1, "2"), ("y", 2, "T")]


def test_a_request_row_reads_back_as_the_orm_reads_it():
    sid = _session()
    params = {"request_id": "r1", "input_type": "text", "prompt": "P\u00e9", "n": 2 ** 53}
    made = pending.create(sid, PendingRequest.KIND_INPUT, params, "chan", {"id": [1, "x"]})
    assert made.pk is not None and not made._state.adding
    orm = PendingRequest.objects.get(pk=made.pk)
    ours = request_sql.request(sid, "r1")
    for field in PendingRequest._meta.concrete_fields:
        assert getattr(ours, field.attname) == getattr(orm, field.attname), field.name
    assert ours.params == params and ours.rpc_id == {"id": [1, "x"]}
    assert ours.status == PendingRequest.Status.PENDING and ours.answer is None
    with pytest.raises(DomainError):  # the same request_id twice: -32602, nothing stored
        pending.create(sid, PendingRequest.KIND_INPUT, params)
    assert PendingRequest.objects.filter(session_id=sid).count() == 1


def test_a_request_into_a_session_deleted_meanwhile_is_session_not_found():
    """Not "request_id already used": both are IntegrityErrors of the same INSERT."""
    sid = _session()
    A2UISessionLog.objects.filter(session_id=sid).delete()
    with pytest.raises(DomainError) as caught:
        pending.create(sid, PendingRequest.KIND_INPUT, {"request_id": "r"})
    assert caught.value.fault is Fault.SESSION_NOT_FOUND


def test_an_insert_inside_a_transaction_fails_without_breaking_it():
    from django.db import transaction

    sid = _session()
    with transaction.atomic():
        pending.create(sid, PendingRequest.KIND_INPUT, {"request_id": "r"})
        with pytest.raises(IntegrityError):
            sql.insert(PendingRequest(session_id=sid, request_id="r", kind="input",
                                         params={}, deadline="2100-01-01T00:00:00Z"))
        assert PendingRequest.objects.filter(session_id=sid).count() == 1  # still usable


@pytest.mark.parametrize("state, agent_active, taken", [
    ("active", True, True), ("closed", True, False), ("active", False, False),
])
def test_an_answer_is_taken_only_while_an_agent_can_receive_it(state, agent_active, taken):
    from a2ui import tokens

    agent, _ = tokens.create_agent(f"a{uuid.uuid4().hex[:8]}")
    sid = _session(agent=agent)
    pending.create(sid, PendingRequest.KIND_INPUT, {"request_id": "r"})
    A2UISessionLog.objects.filter(pk=sid).update(state=state)
    type(agent).objects.filter(pk=agent.pk).update(is_active=agent_active)
    row = request_sql.finish_request(sid, "r", "input", PendingRequest.Status.ANSWERED, {"v": 1},
                                pending.timezone.now(), deliverable=True,
                                live_states=A2UISessionLog.LIVE_STATES)
    assert (row is not None) == taken
    stored = PendingRequest.objects.get(session_id=sid, request_id="r")
    assert stored.status == ("answered" if taken else "pending")
    if taken:
        assert row.answer == {"v": 1} and row.resolved_at == stored.resolved_at


def test_an_outcome_is_claimed_once():
    sid = _session()
    pending.create(sid, PendingRequest.KIND_INPUT, {"request_id": "r"}, "chan")
    assert pending.claim(sid, "r", "chan") is False  # still pending: nothing to deliver
    pending._finish(sid, "r", "input", PendingRequest.Status.TIMED_OUT)
    assert pending.claim(sid, "r", "other") is False
    assert pending.claim(sid, "r", "chan") is True
    assert pending.claim(sid, "r", "chan") is False


# The pool threads' connections (PostgreSQL only: elsewhere per-message calls do not use them)

needs_pool = pytest.mark.skipif(connection.vendor != "postgresql",
                                reason="per-message DB work runs on a pool only on PostgreSQL")


def _backend_pid():
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        return cursor.fetchone()[0]


def _held_at_entry():
    """(this thread, whether it came into the call already holding a connection)."""
    held = connection.connection is not None
    _backend_pid()
    return threading.get_ident(), held


def _leave_a_transaction_open(sid):
    connection.set_autocommit(False)
    pending.create(sid, PendingRequest.KIND_INPUT, {"request_id": f"r{uuid.uuid4().hex}"})


def _autocommit_and_count(sid):
    return connection.get_autocommit(), PendingRequest.objects.filter(session_id=sid).count()


def _kill_my_connection():
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_terminate_backend(pg_backend_pid())")


@needs_pool
async def test_a_pool_thread_keeps_its_connection_between_calls():
    calls = [await dbthreads.run(_held_at_entry) for _ in range(6 * dbthreads.THREADS)]
    seen, kept = set(), []
    for thread, held in calls:
        if thread in seen:
            kept.append(held)
        seen.add(thread)
    assert kept and all(kept)


@needs_pool
async def test_a_connection_left_in_a_transaction_is_not_reused_as_it_is():
    sid = await database_sync_to_async(_session)()
    for _ in range(dbthreads.THREADS):
        await dbthreads.run(_leave_a_transaction_open, sid)
    for _ in range(3 * dbthreads.THREADS):  # rolled back, and every call in autocommit again
        assert await dbthreads.run(_autocommit_and_count, sid) == (True, 0)


@needs_pool
async def test_a_broken_connection_is_replaced():
    for _ in range(dbthreads.THREADS):
        with pytest.raises((OperationalError, InterfaceError)):
            await dbthreads.run(_kill_my_connection)
    for _ in range(3 * dbthreads.THREADS):  # every thread works again, on a new connection
        assert isinstance(await dbthreads.run(_backend_pid), int)


def _thread_and_pid(barrier):
    """(this thread, its connection's backend); the barrier puts each call on its own thread."""
    barrier.wait(10)
    return threading.get_ident(), _backend_pid()


def _terminate(pids):
    import psycopg

    db = connection.settings_dict
    with psycopg.connect(host=db["HOST"] or "127.0.0.1", port=db["PORT"] or 5432,
                         user=db["USER"] or "postgres", password=db["PASSWORD"] or None,
                         dbname=db["NAME"], autocommit=True) as admin:
        for pid in pids:
            admin.execute("SELECT pg_terminate_backend(%s)", (pid,))


@needs_pool
async def test_connections_the_server_closed_are_replaced_before_the_next_call():
    """pg_terminate_backend of every pool thread's connection (a PostgreSQL restart does the
    same): the next call on each thread works, on a new connection (issue 23: each thread
    failed its first call after the loss, however late)."""
    import asyncio

    def every_thread():
        barrier = threading.Barrier(dbthreads.THREADS)
        return asyncio.gather(*[dbthreads.run(_thread_and_pid, barrier)
                                for _ in range(dbthreads.THREADS)])

    before = dict(await every_thread())
    await asyncio.to_thread(_terminate, before.values())
    await asyncio.sleep(0.3)  # the server's goodbye has reached the threads' sockets
    after = dict(await every_thread())
    assert set(after) == set(before)  # the same threads
    assert not set(after.values()) & set(before.values())  # each on a new connection


@needs_pool
def test_a_live_connection_is_judged_without_a_round_trip(monkeypatch):
    """The check before each call on a pool thread sends nothing on a healthy connection: the
    per-message path keeps its one round trip per statement."""
    from psycopg_pool import ConnectionPool

    from a2ui.infra import dbconn

    _backend_pid()
    calls = []
    monkeypatch.setattr(ConnectionPool, "check_connection", staticmethod(calls.append))
    assert dbconn.server_gone(connection.connection) is False
    assert calls == []
    _terminate([_backend_pid()])
    import time

    time.sleep(0.3)
    monkeypatch.undo()
    assert dbconn.server_gone(connection.connection) is True
    connection.close()


@needs_pool
def test_a_credential_is_looked_up_again_when_the_server_ended_the_connection(agent_key):
    """Whatever the project's DATABASES (this thread's connection is no pool checkout): the
    lookup that failed on a connection the server had ended runs once more on a new one."""
    from a2ui import tokens

    assert tokens.verify_agent_key(agent_key).is_active
    _terminate([_backend_pid()])
    import time

    time.sleep(0.3)
    assert tokens.verify_agent_key(agent_key).is_active
