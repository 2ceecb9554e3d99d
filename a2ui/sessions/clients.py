"""A session's clients and what each declared: what the session can show.

A session is not its opener's: any mix of clients may show it (a v0.9 socket, the JSON-RPC
socket, an AG-UI socket, AG-UI 1.0 runs, SSE streams), each declaring what it can show. A
client's *declaration* is its protocol (the adapter's name: ``jsonrpc``, ``v09``, ``agui``,
``agui1``) and the A2UI v0.9 catalogs it is sent surfaces of: a list of catalog ids, ``ALL``
(every catalog the server knows: an SSE stream, an AG-UI 1.0 run) or None (no surfaces).

Two places hold the declarations:

* **attached** clients: one ``"client"`` lease each (``a2ui.infra.caps``) under the holder
  ``("session", <session hex>)``, whose member carries the declaration (``"<lease id>
  <JSON [protocol, catalogs]>"``). In Redis when configured (a sorted set, the lease's expiry as
  score, refreshed by the process that holds it), so a killed process's clients expire within
  ``CAP_LEASE_SECONDS`` and Redis losing the key only hides them until the next refresh puts
  them back; process-local otherwise. A push reads them in the round trip that numbers it
  (``shared.next_seq_and_sockets(..., clients=True)``): no database, no extra trip.
* **resumable** clients: a client that leaves is remembered with the session in PostgreSQL
  (``A2UISessionLog.resumable_clients``: protocol, catalogs, when it left) for
  ``RESUME_WINDOW_SECONDS``, so its declaration survives Redis and moves with it: a client that
  resumes on any process without declaring again (a JSON-RPC ``a2ui.init`` with only
  ``session_id``) gets back the newest one of its protocol, and a resuming client takes one of
  its protocol off the list.

What the session can show is the union of both (:func:`acapabilities`), recomputed as clients
join and leave. Storing a surface never depends on it: a valid surface is stored whatever the
clients are now, and each client is sent what it declared (``a2ui.v09.Tracker``).
"""

import json
import logging
import time
import uuid
from collections import Counter

from channels.db import database_sync_to_async
from django.db import transaction

from a2ui.conf import a2ui_settings
from a2ui.infra import caps, dbthreads, outages, prom, shared
from a2ui.models import A2UISessionLog
from a2ui.sessions import sql as session_sql

log = logging.getLogger("a2ui.services")

ALL = "*"  # a client shown surfaces of every catalog the server knows
KIND = "client"  # the caps kind of the registry's leases
MAX_RESUMABLE = 32  # declarations kept per session (the newest)
_NO_LIMIT = 1 << 30
MISSING = object()


def holder(session_hex):
    """The registry of a session: the caps holder its clients' leases are counted under."""
    return caps.Holder("session", session_hex, _NO_LIMIT)


def normalize(catalogs):
    """A declaration's catalogs: None, ``ALL``, or a sorted list of unique catalog ids."""
    if catalogs is None or catalogs == ALL:
        return catalogs
    return sorted({c for c in catalogs if isinstance(c, str)})


def encode(protocol, catalogs):
    return json.dumps([protocol, normalize(catalogs)], separators=(",", ":"))


def parse_member(member):
    """``(protocol, catalogs)`` of a registry member, or None for one that is not ours."""
    _, _, tag = str(member).partition(" ")
    try:
        protocol, catalogs = json.loads(tag)
    except (ValueError, TypeError):
        return None
    if not isinstance(protocol, str):
        return None
    return protocol, catalogs


#: Members' protocols as :func:`count` last read them: a push reads its session's members
#: every time, and a member (a lease id and its declaration) does not change while it lives.
#: Bounded: emptied when full.
_protocols = {}
MAX_PROTOCOLS_CACHED = 4096


def _protocol_of(member):
    try:
        return _protocols[member]
    except KeyError:
        pass
    except TypeError:  # not hashable: not one of ours
        return None
    declaration = parse_member(member)
    protocol = None if declaration is None else declaration[0]
    if len(_protocols) >= MAX_PROTOCOLS_CACHED:
        _protocols.clear()
    _protocols[member] = protocol
    return protocol


def count(members):
    """``{protocol: attached clients}`` of registry members (sorted by protocol)."""
    if isinstance(members, list) and len(members) == 1:  # the common case: one client
        protocol = _protocol_of(members[0])
        return {} if protocol is None else {protocol: 1}
    counted = Counter(p for p in map(_protocol_of, members) if p is not None)
    return dict(sorted(counted.items()))


def per_protocol(declarations):
    """``{protocol: n}`` of ``(protocol, catalogs)`` pairs, sorted by protocol."""
    return dict(sorted(Counter(protocol for protocol, _ in declarations).items()))


class Sent(int):
    """A push's sequence number with the clients it reached (``{protocol: n}``), for its
    answer (``delivery.answer``)."""

    clients = None

    def __new__(cls, seq, clients):
        self = super().__new__(cls, seq)
        self.clients = clients
        return self


# Joining and leaving ---------------------------------------------------------------------------


async def ajoin(session_id, protocol, catalogs, resumed=False):
    """Register a client of the session; returns its lease (``aleave`` ends it).

    ``resumed``: the client resumes the session, so it takes one remembered declaration of its
    protocol off the resumable list (it is attached again). Redis unreachable: the client is
    not registered (logged by ``caps``); it is shown the session all the same.
    """
    if resumed:
        await dbthreads.run(_take_resumable, session_id, protocol)
    lease = await caps.acquire(KIND, [holder(session_id.hex)], tag=encode(protocol, catalogs))
    lease.declaration = (protocol, normalize(catalogs))
    if prom.ON:
        lease.prom_session = session_id.hex
        prom.client_joined(session_id.hex, protocol)
    return lease


async def aleave(session_id, lease, remember=True):
    """The client left: remember its declaration with the session (``remember``: it may resume;
    not when the session is ending or the client never attached), then release its lease.
    Best-effort: a failure is logged, and the lease expires by itself."""
    try:
        if remember:
            protocol, catalogs = lease.declaration
            await _remember((session_id, protocol, catalogs, time.time()))
    except Exception:
        outages.warning(log, "remembering a leaving client",
                        "a2ui: a leaving client of session %s was not remembered for its resume",
                        session_id, session=session_id)
    finally:
        counted = getattr(lease, "prom_session", None)
        if counted is not None:
            lease.prom_session = None
            prom.client_left(counted, lease.declaration[0])
        await lease.release_shielded()


def _window_start():
    return time.time() - a2ui_settings.RESUME_WINDOW_SECONDS


def resumable(entries):
    """The entries still within the resume window, oldest first (garbage left out)."""
    start = _window_start()
    return [
        e for e in (entries if isinstance(entries, list) else ())
        if isinstance(e, dict) and isinstance(e.get("protocol"), str)
        and isinstance(e.get("left_at"), int | float) and e["left_at"] >= start
    ]


def remember_many(leaving):
    """Remember leaving clients with their sessions: ``leaving`` is ``[(session_id, protocol,
    catalogs, left_at)]`` (a session may come more than once, in the order they left). One
    transaction for them all: the live sessions' rows read and locked, then written; a session
    no longer live is left as it is (nothing to resume). Returns a None per client."""
    added = {}
    for session_id, protocol, catalogs, left_at in leaving:
        sid = session_id if isinstance(session_id, uuid.UUID) else uuid.UUID(str(session_id))
        added.setdefault(sid, []).append(
            {"protocol": protocol, "catalogs": normalize(catalogs), "left_at": left_at})
    on_postgresql = dbthreads.vendor() == "postgresql"
    with transaction.atomic():
        if on_postgresql:
            rows = session_sql.lock_resumable(list(added))
        else:
            rows = dict(A2UISessionLog.objects.select_for_update(no_key=True)
                        .filter(pk__in=list(added), state__in=A2UISessionLog.LIVE_STATES)
                        .order_by("pk").values_list("pk", "resumable_clients"))
        entries = {sid: (resumable(rows[sid]) + added[sid])[-MAX_RESUMABLE:] for sid in rows}
        if entries and on_postgresql:
            session_sql.set_resumable(entries)
        elif entries:
            for sid, kept in entries.items():
                A2UISessionLog.objects.filter(pk=sid).update(resumable_clients=kept)
    return [None] * len(leaving)


#: One client's :func:`remember_many`, batched with those of the clients leaving beside it (a
#: mass close: one transaction for hundreds of them).
_remember = dbthreads.batched(remember_many)


def _take_resumable(session_id, protocol):
    with transaction.atomic():
        row = (A2UISessionLog.objects.select_for_update(no_key=True)
               .filter(pk=session_id).values_list("resumable_clients", flat=True).first())
        entries = resumable(row)
        for i in range(len(entries) - 1, -1, -1):
            if entries[i]["protocol"] == protocol:
                del entries[i]
                break
        if entries != row:
            A2UISessionLog.objects.filter(pk=session_id).update(resumable_clients=entries)


def inherited(session, protocol):
    """The catalogs of the newest resumable client of ``protocol`` (a session row read by the
    resume), or ``MISSING``: what a client that resumes without declaring anything gets."""
    for entry in reversed(resumable(session.resumable_clients)):
        if entry["protocol"] == protocol:
            return entry.get("catalogs")
    return MISSING


# What the session can show ---------------------------------------------------------------------


async def attached(session_id):
    """``[(protocol, catalogs)]`` of the session's attached clients, as registered now."""
    members = await caps.members(KIND, holder(session_id.hex))
    return [d for d in map(parse_member, members) if d is not None]


def _resumable_of(session_id):
    row = (A2UISessionLog.objects.filter(pk=session_id)
           .values_list("resumable_clients", flat=True).first())
    return resumable(row)


def union(declarations, known=()):
    """The catalogs a set of declarations can show: a sorted list (``ALL`` is ``known``, the
    server's catalog ids)."""
    out = set()
    for _, catalogs in declarations:
        if catalogs == ALL:
            out.update(known)
        elif isinstance(catalogs, list):
            out.update(c for c in catalogs if isinstance(c, str))
    return sorted(out)


async def acapabilities(session_id):
    """What a session can show now, from its attached and resumable clients::

        {"clients": {"v09": 1, "agui": 1},            # attached, per protocol
         "resumable": {"jsonrpc": 1},                 # left within the resume window
         "catalogs": ["https://a2ui.org/..."],       # v0.9 catalogs some client is shown
         "attached": [{"protocol": "v09", "catalogs": [...]}, ...],
         "resumable_clients": [{"protocol", "catalogs", "left_at"}, ...]}
    """
    now = await attached(session_id)
    return _shown(now, await database_sync_to_async(_resumable_of)(session_id))


def _shown(now, later):
    from a2ui.surfaces.catalogs import catalog_registry

    declarations = now + [(e["protocol"], e.get("catalogs")) for e in later]
    return {
        "clients": per_protocol(now),
        "resumable": per_protocol(declarations[len(now):]),
        "catalogs": union(declarations, catalog_registry().ids()),
        "attached": [{"protocol": p, "catalogs": c} for p, c in now],
        "resumable_clients": later,
    }


def capabilities(session_id):
    """:func:`acapabilities` for synchronous callers (the admin): the registry read on an event
    loop, the session's row on the caller's own connection (inside its transaction, if any;
    not through ``database_sync_to_async``, which would close it)."""
    from asgiref.sync import async_to_sync

    return _shown(async_to_sync(attached)(session_id), _resumable_of(session_id))


def members_key_matches(session_hex):
    """The registry's key as ``shared`` reads it on the push path (kept equal; tested)."""
    return holder(session_hex).key(KIND) == shared.clients_key(session_hex)
