"""Consent (seed 000 section 8.4): who agreed to what, and the gate it puts on user data.

A consent is a person's, not a socket's: granted once (in any session), it holds for every
session of that person until revoked, by the person (``user.consent`` with ``granted: false``,
or the REST API) or by an operator on their behalf (the admin). Every grant, refusal and
revocation is an A2UIConsentRecord change and an AuditEvent, and the agent of each live session
of that person is told with a ``consent.changed`` notification.

The gate: while a type in ``A2UI['REQUIRED_CONSENTS']`` is missing, an agent's
``ui.request_input`` / ``ui.confirm`` and a person's ``user.respond`` / ``user.approve`` are
refused with -32010 "Consent required" (``data.consent_types``: what is missing), so nothing of
the person's reaches the agent. Neither check writes to the database on the message path:

* a user socket keeps its session's missing types in memory, computed at ``a2ui.init`` and
  updated by ``a2ui.consent_changed`` events on the person's group (every process hears them);
* the agent side reads the person's active types from a per-session Redis key (a process-local
  dict without Redis), filled from the database on a miss and deleted on every change.
"""

import json
import time

from asgiref.sync import async_to_sync
from channels.db import database_sync_to_async
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext

from a2ui.compliance import audit
from a2ui.conf import a2ui_settings
from a2ui.core.errors import DomainError, Fault, invalid_input
from a2ui.infra import caps, dbthreads, groups, shared
from a2ui.models import A2UIConsentRecord, A2UISessionLog

CACHE_TTL = 300
MAX_TYPE_LENGTH = 64
_local = {}  # session hex -> (json list of active types, monotonic expiry); one process only


# Settings ----------------------------------------------------------------------------------------


def required_types():
    return [str(t) for t in (a2ui_settings.REQUIRED_CONSENTS or [])]


def known_types():
    """Types a person may grant or refuse: the required ones and the described ones."""
    return list(dict.fromkeys([*required_types(), *(a2ui_settings.CONSENT_DESCRIPTIONS or {})]))


def describe(types):
    """``[{"type", "description"}]`` for the a2ui.consent_required prompt, in the active
    language (descriptions may be ``gettext_lazy`` strings in the settings)."""
    texts = a2ui_settings.CONSENT_DESCRIPTIONS or {}
    return [
        {"type": t, "description": str(texts.get(t) or "")
         or gettext("The agent asks for your consent: %(type)s.") % {"type": t}}
        for t in types
    ]


def state(missing):
    """``[{"type", "description", "granted"}]``: each required type, given or not (what the
    person's page lists under "Your consent"), from a socket's missing types."""
    return [{**d, "granted": d["type"] not in missing} for d in describe(required_types())]


def consent_required_error(missing):
    return DomainError(Fault.CONSENT_REQUIRED, data={"consent_types": list(missing)})


def require(missing):
    """The gate, the one check every path makes: -32010 (``Fault.CONSENT_REQUIRED``, with the
    missing types) while ``missing`` is not empty.

    Where ``missing`` comes from depends only on the caller: a person's socket keeps it in
    memory (``consumers.socket.SessionSocket.check_consent``), the agent side and the
    socketless paths read it per session or per person (``a2ui.push.admit.consent_gate``,
    ``arequire_person``).
    """
    if missing:
        raise consent_required_error(missing)


# Reading -----------------------------------------------------------------------------------------


def active_types(user_id):
    """The consent types the person has granted and not revoked."""
    if user_id is None:
        return set()
    return set(
        A2UIConsentRecord.objects.filter(
            user_id=user_id, granted=True, revoked_at__isnull=True
        ).values_list("consent_type", flat=True)
    )


def missing_types(user_id):
    """Required types the person has not (or no longer) granted, in settings order."""
    required = required_types()
    if not required:
        return []
    active = active_types(user_id)
    return [t for t in required if t not in active]


# On the per-message pool (``dbthreads``): a socket's open does not queue behind the one
# thread-sensitive thread, nor keep asgiref's context storages in the consumer's context.
amissing_types = dbthreads.wrap(missing_types)


def _session_user(session_id):
    return (
        A2UISessionLog.objects.filter(pk=session_id).values_list("user_id", flat=True).first()
    )


async def _cached_active(session_hex):
    client = shared.redis_client()
    if client is None:
        entry = _local.get(session_hex)
        if entry is None or entry[1] < time.monotonic():
            return None
        return set(json.loads(entry[0]))
    value = await client.get(f"a2ui:consent:{session_hex}")
    return None if value is None else set(json.loads(value))


async def _cache_active(session_hex, active):
    value = json.dumps(sorted(active))
    client = shared.redis_client()
    if client is None:
        if len(_local) > 10000:
            now = time.monotonic()
            for key in [k for k, v in _local.items() if v[1] < now]:
                del _local[key]
        _local[session_hex] = (value, time.monotonic() + CACHE_TTL)
        return
    await client.set(f"a2ui:consent:{session_hex}", value, ex=CACHE_TTL)


async def _forget(session_hexes):
    if not session_hexes:
        return
    client = shared.redis_client()
    if client is None:
        for key in session_hexes:
            _local.pop(key, None)
        return
    await client.delete(*[f"a2ui:consent:{h}" for h in session_hexes])


async def amissing_for_session(session_id):
    """Missing required types for a live session's person; cached, no DB write."""
    required = required_types()
    if not required:
        return []
    hexid = session_id.hex
    active = await _cached_active(hexid)
    if active is None:
        cached = await shared.cached_session(hexid)
        if cached is not None:
            user_id = int(cached[1]) if cached[1] else None
            active = await dbthreads.run(active_types, user_id)
        else:
            active = await dbthreads.run(lambda: active_types(_session_user(session_id)))
        await _cache_active(hexid, active)
    return [t for t in required if t not in active]


async def arequire_person(user_id):
    """The gate for a person's request that has no socket (MCP ``ui://`` actions)."""
    require(await amissing_types(user_id))


# Changing ----------------------------------------------------------------------------------------


def validate_params(params):
    """``user.consent`` params: ``{"consent_type": str, "granted": bool}``, or -32602."""
    if not isinstance(params, dict):
        raise invalid_input("params", "params must be an object")
    consent_type = params.get("consent_type")
    if not isinstance(consent_type, str) or not consent_type:
        raise invalid_input("params.consent_type", "consent_type must be a non-empty string")
    known = known_types()
    if consent_type not in known:
        raise DomainError(
            Fault.INVALID_INPUT,
            "Unknown consent_type",
            data={"path": "params.consent_type", "reason": f"expected one of {known}"},
        )
    granted = params.get("granted")
    if not isinstance(granted, bool):
        raise invalid_input("params.granted", "granted must be true or false")
    return consent_type, granted


async def count_choice(user_id, scope):
    """A socket's consent choice counted against ``RATE_CONSENTS_PER_MINUTE`` of the person and
    of the client address of ``scope`` (``caps.RateLimited``: the protocol's rate-limit error),
    before anything is stored."""
    await caps.check_rate("consent", f"user:{user_id}", caps.address_of(scope))


def _live_sessions(user_id):
    """(session_id, agent_id) of every live session of the person: whom to tell."""
    return list(
        A2UISessionLog.objects.filter(
            user_id=user_id, state__in=A2UISessionLog.LIVE_STATES
        ).values_list("session_id", "agent_id")
    )


def _session_agent(session_id):
    if session_id is None:
        return None
    session = A2UISessionLog.objects.select_related("agent").filter(pk=session_id).first()
    return session.agent if session is not None else None


def record_choice(user, consent_type, granted, session_id=None):
    """Record a person's answer to a consent prompt.

    Granting an already active consent changes nothing. Refusing one that is active revokes it;
    refusing one that is not records the refusal. Returns a change dict (see ``anotify``) or
    None when nothing changed.
    """
    now = timezone.now()
    agent = _session_agent(session_id)
    with transaction.atomic():
        active = A2UIConsentRecord.objects.select_for_update(of=("self",), no_key=True).filter(
            user=user, consent_type=consent_type, granted=True, revoked_at__isnull=True
        )
        active_ids = list(active.values_list("pk", flat=True))
        if granted:
            if active_ids:
                return None
            record = A2UIConsentRecord.objects.create(
                session_id=session_id, user=user, consent_type=consent_type, granted=True,
                granted_at=now,
            )
            action, ids = "consent.grant", [record.pk]
        elif active_ids:
            A2UIConsentRecord.objects.filter(pk__in=active_ids).update(
                revoked_at=now, revoked_by=user
            )
            action, ids = "consent.revoke", active_ids
        else:
            record = A2UIConsentRecord.objects.create(
                session_id=session_id, user=user, consent_type=consent_type, granted=False,
                granted_at=now,
            )
            action, ids = "consent.refuse", [record.pk]
    for pk in ids:
        audit.record(
            action, actor=user, agent=agent, target=("a2uiconsentrecord", pk),
            session_id=session_id,
            details={"consent_type": consent_type, "granted": granted, "by": "user"},
        )
    return {
        "user_id": user.pk,
        "consent_type": consent_type,
        "granted": granted and action == "consent.grant",
        "sessions": _live_sessions(user.pk),
    }


arecord_choice = database_sync_to_async(record_choice)


def revoke(records, actor, *, on_behalf=False):
    """Revoke consent records still in force; returns one change dict per (person, type).

    ``records`` is a queryset or an iterable of A2UIConsentRecord; ones already revoked or
    refused are skipped. ``on_behalf`` marks an operator acting for the person (the admin).
    """
    ids = [r.pk for r in records]
    now = timezone.now()
    with transaction.atomic():
        rows = list(
            A2UIConsentRecord.objects.select_for_update(of=("self",), no_key=True)
            .filter(pk__in=ids, granted=True, revoked_at__isnull=True)
            .select_related("session__agent", "user")
        )
        A2UIConsentRecord.objects.filter(pk__in=[r.pk for r in rows]).update(
            revoked_at=now, revoked_by=actor
        )
    changes = {}
    for r in rows:
        audit.record(
            "consent.revoke", actor=actor,
            agent=r.session.agent if r.session is not None else None,
            target=r, session_id=r.session_id,
            details={
                "consent_type": r.consent_type, "granted": False,
                "by": "operator" if on_behalf else "user",
                "user": r.user.get_username() if r.user else None,
            },
        )
        if r.user_id is not None:
            changes[(r.user_id, r.consent_type)] = {
                "user_id": r.user_id, "consent_type": r.consent_type, "granted": False,
            }
    result = []
    for change in changes.values():
        change["sessions"] = _live_sessions(change["user_id"])
        result.append(change)
    return result


async def anotify(change):
    """Tell the person's sockets (every process) and the agent of each live session."""
    if change is None:
        return
    sessions = change["sessions"]
    await _forget([sid.hex for sid, _ in sessions])
    await groups.send_group(
        groups.user_group(change["user_id"]),
        {
            "type": "a2ui.consent_changed",
            "consent_type": change["consent_type"],
            "granted": change["granted"],
        },
    )
    for sid, agent_id in sessions:
        await groups.tell_agent(agent_id, "consent.changed", {
            "session_id": str(sid), "consent_type": change["consent_type"],
            "granted": change["granted"]})


def notify(changes):
    """Sync callers (REST views, the admin): ``anotify`` every change."""

    async def run():
        for change in changes:
            await anotify(change)

    async_to_sync(run)()


def revoke_and_notify(records, actor, *, on_behalf=False):
    changes = revoke(records, actor, on_behalf=on_behalf)
    notify(changes)
    return changes
