"""What replay needs, kept: a session's visible events (``a2ui.core.replay.KINDS``).

``arecord`` stores one event as its clients get it (``stream.emit`` calls it for the kinds
replay folds, after the event has its sequence number; a failure to store is logged, never
the push's failure). The rows belong to the session and are deleted with it, so the
retention that purges sessions purges them (docs/compliance.md, "Replay").

``events(session)`` gives them back oldest first, with the session's consent choices merged in
by time (``consent.recorded``), for ``a2ui.core.replay``.
"""

import json
import logging

from django.db import connection
from django.utils import timezone

from a2ui.conf import a2ui_settings
from a2ui.core import replay
from a2ui.models import A2UIConsentRecord, SessionEvent
from a2ui.services import dbthreads

log = logging.getLogger("a2ui.services")


def _insert_sql():
    q = connection.ops.quote_name
    names = ", ".join(q(SessionEvent._meta.get_field(f).column)
                      for f in ("session", "seq", "kind", "data", "at"))
    return f"INSERT INTO {q(SessionEvent._meta.db_table)} ({names}) VALUES (%s, %s, %s, %s, %s)"


def record(session_id, seq, kind, data):
    """One row, by one INSERT (the ORM's create costs twice the CPU on the push path)."""
    sid = session_id.hex if connection.vendor == "sqlite" else session_id
    with connection.cursor() as cursor:
        cursor.execute(_insert_sql(), [sid, seq or 0, str(kind), json.dumps(data),
                                       timezone.now()])


async def arecord(session_id, seq, kind, data):
    """Store one event for replay (unless ``A2UI['REPLAY_KEEP_EVENTS']`` is False); True when
    stored."""
    if kind not in replay.KINDS or not a2ui_settings.REPLAY_KEEP_EVENTS:
        return False
    try:
        await dbthreads.run(record, session_id, seq, kind, data)
    except Exception as exc:  # replay loses a moment; the push goes on
        log.warning("a2ui: event %s of session %s not kept for replay (%s: %s)", kind,
                    session_id, type(exc).__name__, exc)
        return False
    return True


def events(session):
    """``[(at, kind, data)]`` of ``session`` oldest first: its kept events and consent choices."""
    rows = [(e.at, 0, e.id, e.kind, e.data)
            for e in SessionEvent.objects.filter(session=session).order_by("id")]
    for rec in A2UIConsentRecord.objects.filter(session=session).order_by("granted_at", "pk"):
        rows.append((rec.granted_at, 1, rec.pk, replay.CONSENT_RECORDED,
                     {"consent_type": rec.consent_type, "granted": rec.granted}))
    rows.sort(key=lambda r: (r[0], r[1], r[2]))
    return [(at, kind, data) for at, _, _, kind, data in rows]


def screen(session, at, registry=None, limits=None):
    """``(moments, at, messages)``: the session's replay moments, ``at`` clamped to them, and
    the web client's notifications that draw the screen at moment ``at``."""
    from a2ui.services import activity as activity_service
    from a2ui.services import surfaces as surface_service

    kept = [(kind, data) for _, kind, data in events(session)]
    moments = replay.moments(kept)
    at = len(kept) if at is None else max(0, min(int(at), len(kept)))
    shown = replay.replay(kept, at, registry or surface_service.catalog_registry(),
                          limits or activity_service.limits())
    return moments, at, replay.messages(shown)


def moment_links(session, entries):
    """Set ``entry.extra["replay_at"]`` on the timeline's answer and consent entries: the
    moment whose screen stood when the answer or choice was given (before it took effect)."""
    kept = events(session)
    closed = {data.get("request_id"): i for i, (_, kind, data) in enumerate(kept)
              if kind == "request.closed"}
    chosen = [(at, data.get("consent_type"), i) for i, (at, kind, data) in enumerate(kept)
              if kind == replay.CONSENT_RECORDED]
    for entry in entries:
        if entry.kind == "answer" and entry.extra.get("request_id") in closed:
            entry.extra["replay_at"] = closed[entry.extra["request_id"]]
        elif entry.kind == "consent":
            found = [i for at, ctype, i in chosen
                     if at == entry.at and ctype == entry.extra.get("consent_type")]
            entry.extra["replay_at"] = found[0] if found else sum(
                1 for at, _, _ in kept if at <= entry.at)
    return entries
