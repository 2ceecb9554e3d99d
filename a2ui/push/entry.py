"""Stage 1 of a push, the entry: the one call every agent path makes, then the pipeline in
order.

Every transport an agent pushes through calls :func:`apush` with a method of the agent-method
table (``a2ui.core.agentmethods``, declared by the protocols' adapters): the agent socket,
REST, the Python API (``a2ui.agents``) and the MCP agent tools. The method's ``events`` (its
protocol's sans-I/O translation) turns the validated params into session events
(``a2ui.core.events``), and :func:`push` takes them through the stages:

1. entry (here): the method's events, the span and the metrics;
2. admit (``a2ui.push.admit``): the owner check, the content limits, the consent gate;
3. store (``a2ui.push.store``): the state change, one transaction;
4. keys (``a2ui.push.keys``): the idempotency key in the same transaction, the outcome of a
   lost connection;
5. sequence (``a2ui.push.sequence``): the session's next number, one round trip;
6. fan-out (``a2ui.push.fanout``): straight to this process's sockets, or one publish;
7. outcome (``a2ui.push.outcome``): what the agent is answered.

The order is store (commit), then send: nothing reaches a client that is not stored, and a
failure after the commit is not an error (a ``warning``, and the clients resync). Progress,
notify and navigate store nothing: their owner check and number are one round trip.
"""

import logging

from a2ui.core import agentmethods, events
from a2ui.core.content import idempotency
from a2ui.core.errors import DomainError, Fault
from a2ui.core.events import Kind
from a2ui.infra import dbthreads, outages, prom, tracing
from a2ui.push import admit, answers, fanout, keys, outcome, sequence, store
from a2ui.push.outcome import Pushed
from a2ui.sessions import lifecycle as sessions
from a2ui.sessions.counters import buffer

log = logging.getLogger("a2ui.services")


def entry(method):
    """The table's entry for ``method``, or -32601 (as an unknown seed-000 method)."""
    found = agentmethods.get(method)
    if found is None or not found.handled:
        raise DomainError(Fault.UNKNOWN_OPERATION, data={"method": str(method)[:100]})
    return found


def validate(method, params):
    """``(session_id, clean params)`` by the entry's validator."""
    return entry(method).validate(params)


async def apush(agent_id, session_id, method, params, *, key=None, reply_channel="",
                rpc_id=None, where="params"):
    """Push one agent method's ``params`` (validated already, without ``session_id``) to a
    session; the result is the entry's ``shape``: "seq" (a ``Sent`` or ``Pushed``),
    "request" (``(seq, request)``: the answer comes later on ``reply_channel``), "result" (a
    JSON object), "list". ``where``: how the caller's path names the params in a refusal's
    ``data.path`` ("params" on the agent socket, "arguments" for an MCP tool, "" when they
    are the body or the call's own arguments).

    Timed for the Prometheus metrics when they are on (one latency observation per call, per
    protocol of the session's attached clients)."""
    found = entry(method)
    if not prom.ON:
        return await _dispatch(found, agent_id, session_id, params, key, reply_channel, rpc_id,
                               where)
    start = prom.now()
    result = await _dispatch(found, agent_id, session_id, params, key, reply_channel, rpc_id,
                             where)
    prom.pushed_result(prom.now() - start, result)
    return result


async def _dispatch(found, agent_id, session_id, params, key, reply_channel, rpc_id, where):
    if found.events is None:  # not a push (a listing, a run's end): the entry's own call
        return await found.call(agent_id, session_id, params, key=key,
                                reply_channel=reply_channel, rpc_id=rpc_id, where=where)
    items, prefix = found.events(params, key, where)
    try:
        if len(items) == 1:
            kind, data = items[0]
            seq, request = await aemit(agent_id, session_id, kind, data, key=key,
                                       reply_channel=reply_channel, rpc_id=rpc_id,
                                       prefix=prefix)
            pushed = [seq]
        else:
            pushed, request = await aemit_batch(agent_id, session_id, items, key=key), None
    except DomainError as exc:
        if found.reword is None:
            raise
        raise found.reword(exc, key, where) from None
    if found.shape == "request":
        return pushed[0], request
    if found.shape == "result":
        return _result(items, pushed[-1])
    return pushed[0] if len(pushed) == 1 else pushed


def _result(items, seq):
    """A "result" entry's answer (a v0.9 batch: its surface numbers)."""
    if isinstance(seq, Pushed):
        out = dict(seq.outcome or {})
        if seq.replayed:
            out["replayed"] = True
        if seq.warning:
            out["warning"] = seq.warning
        return out
    data = seq.data
    return outcome.surfaces(data["first_seq"], data["messages"], seq)


async def apush_batch(agent_id, session_id, batch, key=None):
    """Several pushes of validated ``(method, params)`` pairs, all or nothing (REST
    ``messages``); their sequence numbers."""
    items = []
    for method, params in batch:
        items.extend(entry(method).events(params, None, "")[0])
    return await aemit_batch(agent_id, session_id, items, key=key)


async def aemit(agent_id, session_id, kind, data, *, reply_channel="", rpc_id=None, prefix="",
                key=None):
    """Push one session event of an agent (validated by its protocol): ``(seq, request)``,
    the request being a ``PendingRequest`` for ``request.opened`` (its answer comes to
    ``reply_channel``), else None. The same request again (a retry) is not shown again:
    ``(None, request)``, and ``reply_channel`` waits on it or gets its outcome at once.
    ``key``: an idempotency key (``a2ui.core.content.idempotency.Key``)."""
    with tracing.span("a2ui.push", kind=str(kind), session=session_id):
        data = admit.clean(kind, data, prefix)
        if kind in store.STATELESS and key is None:
            return await _stateless(agent_id, session_id, kind, data), None
        sid = await admit.agent_session(agent_id, session_id)
        if key is not None:
            if kind is Kind.REQUEST_OPENED:
                raise ValueError("a request's request_id is its idempotency key")
            return (await _keyed(sid, [(kind, data)], key, prefix))[0], None
        if kind is Kind.REQUEST_OPENED:
            return await _ask(sid, data, reply_channel, rpc_id)
        items = await store.save(sid, [(kind, data)], prefix)
        return (await _send_all(sid, items))[0], None


async def aemit_batch(agent_id, session_id, items, key=None):
    """Push a batch of ``(kind, data)`` events all or nothing, then send them in order; their
    sequence numbers. None of them opens a request (a request waits for its own answer)."""
    with tracing.span("a2ui.push", kind="batch", session=session_id, items=len(items)):
        if any(kind is Kind.REQUEST_OPENED for kind, _ in items):
            raise ValueError("a batch cannot open requests")
        items = [(kind, admit.clean(kind, data)) for kind, data in items]
        sid = await admit.agent_session(agent_id, session_id)
        if key is not None:
            return await _keyed(sid, items, key)
        return await _send_all(sid, await store.save(sid, items))


async def _ask(sid, data, reply_channel, rpc_id):
    await admit.consent_gate(sid)  # -32010 while a required consent is missing
    asked = await store.ask(sid, data["kind"], data["params"], reply_channel, rpc_id)
    if not asked.new:
        await answers.aretried(asked)
        return None, asked.row
    return (await _send_all(sid, [(Kind.REQUEST_OPENED, data)]))[0], asked.row


async def _keyed(sid, items, key, prefix=""):
    """Store ``items`` and the key in one transaction, then send; or answer a retry."""
    fingerprint = _fingerprint(items)
    stores = any(store.stores(kind) for kind, _ in items)
    try:
        if stores:
            applied, replay = await dbthreads.run(
                store.in_session, keys.keyed, sid, store.apply_all, key, fingerprint,
                _outcome_of, items, prefix)
        else:  # nothing stored but the key: claim it, then send
            applied, replay = items, await dbthreads.run(
                store.in_session, keys.claim, sid, key, fingerprint)
    except keys.CONNECTION_LOST as exc:
        settled = None if keys.never_sent(exc) else await keys.asettle(sid, key)
        if settled is None:
            raise  # not stored: a failure, and nothing was sent
        if stores:  # stored by this call, never sent: the clients resync
            fanout.repair(sid)
            return [Pushed(warning=keys.WARNING_LATE, outcome=settled)] * len(items)
        applied, replay = items, None  # claimed by this call: send
    if replay is not None:
        if stores:  # the original may be stored but not delivered (its process died)
            fanout.repair(sid)
        return [Pushed(replayed=True, outcome=replay)] * len(items)
    if stores:
        return await _send_all(sid, applied)
    seqs = []
    try:
        for kind, data in applied:
            seqs.append(await _send(sid, kind, data))
    except Exception:
        if seqs:  # partly shown: keep the key, so a retry shows nothing twice (at most once)
            raise
        try:  # nothing sent: free the key for the retry
            await dbthreads.run(keys.release, sid, key)
        except Exception:
            log.warning("a2ui: idempotency key of an unsent push to %s kept", sid)
        raise
    return seqs


def _fingerprint(items):
    if len(items) == 1 and items[0][0] is Kind.SURFACE_BATCH:
        return idempotency.fingerprint("a2ui.v09", items[0][1]["messages"])
    return idempotency.fingerprint([(str(kind), data) for kind, data in items])


def _outcome_of(applied):
    return store.outcome_of(applied)


async def _send_all(sid, items):
    """Send stored events in order. A failure now, after the commit, is no error: the push is
    stored, so its answer is a :class:`Pushed` with a warning and the clients resync."""
    seqs = []
    for kind, data in items:
        try:
            seqs.append(await _send(sid, kind, data))
        except Exception as exc:
            outages.tally()
            log.warning("a2ui: a push to session %s was stored but not delivered (%s: %s): "
                        "its clients resync", sid, type(exc).__name__, exc)
            fanout.repair(sid)
            late = Pushed(warning=keys.WARNING_LATE, outcome=store.outcome_of(items))
            return seqs + [late] * (len(items) - len(seqs))
    return seqs


async def _send(sid, kind, data):
    seq, epoch, sockets, members = await sequence.take(sid, clients=True)
    buffer.add(sid, rendered=int(kind is Kind.COMPONENT_RENDERED),
               inputs=int(kind is Kind.REQUEST_OPENED), pushed=True)
    await fanout.send(sid, seq, sockets, _message(kind, data, seq, epoch))
    return _sent(seq, kind, members, data)


async def _stateless(agent_id, session_id, kind, data):
    """Progress, toasts and navigation: owner check and number in one round trip."""
    sid = sessions.parse_session_id(session_id)
    owner, seq, epoch, sockets, members = await sequence.take_owned(sid)
    if not admit.owns(owner, agent_id):
        await admit.agent_session(agent_id, sid)
    buffer.add(sid, pushed=True)
    await fanout.send(sid, seq, sockets, _message(kind, data, seq, epoch))
    return _sent(seq, kind, members, data)


def _message(kind, data, seq, epoch):
    return events.to_message(kind, data, seq, epoch)


def _sent(seq, kind, members, data):
    sent = fanout.sent(seq, kind, members)
    if kind is Kind.SURFACE_BATCH:  # its answer is its surface numbers (``_result``)
        sent.data = data
    return sent
