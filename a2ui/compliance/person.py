"""A person's data on request (GDPR Art. 15, 17, 20): export everything a2ui holds about one
person as one JSON document, and erase it (with a dry run that only counts).

What is held about a person (``user``):

* their sessions, with what each showed and awaited: rendered components, pending requests and
  their answers, v0.9 surfaces, the session activity, AG-UI runs, push idempotency keys;
* their consent records;
* their stream tokens' metadata (id, type, agent, dates; a token itself is never stored);
* the audit events about them: theirs (as actor), of their sessions, tokens and consent
  records, those naming them as target, and those whose details name them (``user``,
  ``user_id``);
* the agents they own (names only) and their account's identity fields.

Erasure first revokes their stream tokens in force and closes their live sessions (through
``a2ui.push.revocation``, so sockets in every process close), then in one transaction: fences
their sessions (``a2ui.sessions.fence``: no writer of any process writes to them again),
deletes what their sessions showed and awaited, anonymizes the session rows (kept for
statistics: state, counters, dates), deletes consent records and stream token records, drops
them as owner of agents, redacts the audit events about them (``a2ui.compliance.chain.redact``:
target id and details, and the actor label of their own; an operator's event keeps its
operator) and records ``person.erase`` naming the events it redacted, which is what makes those
redactions valid to ``a2ui_audit verify``. The chain still verifies because each event's chain
hash covers a digest of that content, not the content. Then it counts again what is held
(``ErasureReport.left``: nothing). The account itself (``auth.User``) belongs to the project and
is left as it is. The audit events that record an export or erasure (``person.export``,
``person.erase``, ``person.erase.dry_run``) are kept: they name the person only by their user id.
Every export and erasure (dry runs too) is itself an audit event.
"""

import time
from dataclasses import dataclass, field

from django.core.serializers.json import DjangoJSONEncoder
from django.db import OperationalError, transaction
from django.db.models import Q
from django.forms.models import model_to_dict
from django.utils import timezone

from a2ui.compliance import audit
from a2ui.compliance import chain as auditchain
from a2ui.compliance import replay as replaylog
from a2ui.models import (
    A2UIConsentRecord,
    A2UISessionLog,
    Agent,
    AgentRun,
    AuditEvent,
    PendingRequest,
    PushKey,
    RenderedComponent,
    SessionActivity,
    SessionEvent,
    StreamToken,
    Surface,
)
from a2ui.sessions import fence

FORMAT = "a2ui-person-export/1"
#: Tries of the erasure's transaction when the database names a deadlock.
TRIES = 3
#: The events that record handling a request are kept as they are (they name the user id).
ERASE, DRY_RUN = auditchain.chain.ERASE_ACTION, "person.erase.dry_run"
KEPT_ACTIONS = ("person.export", ERASE, DRY_RUN)
SESSION_CONTENT = (("components", RenderedComponent), ("requests", PendingRequest),
                   ("surfaces", Surface), ("runs", AgentRun), ("push_keys", PushKey),
                   ("replay_events", SessionEvent))  # what the person saw, kept for replay


class PersonError(ValueError):
    pass


def find_user(identifier):
    """The user with this username (or ``#<id>``); PersonError if there is none."""
    from django.contrib.auth import get_user_model

    User = get_user_model()
    text = str(identifier or "").strip()
    if not text or "\x00" in text:
        raise PersonError("Name a user (a username, or #ID).")
    try:
        if text.startswith("#") and text[1:].isdigit():
            return User.objects.get(pk=int(text[1:]))
        return User.objects.get_by_natural_key(text)
    except User.DoesNotExist:
        raise PersonError(f"No user {text!r}.") from None


def _sessions(user):
    return A2UISessionLog.objects.filter(user=user)


def audit_events(user, session_ids=None, jtis=None, consent_ids=None):
    """The audit events about ``user`` (see the module's docstring)."""
    if session_ids is None:
        session_ids = list(_sessions(user).values_list("pk", flat=True))
    if jtis is None:
        jtis = list(StreamToken.objects.filter(user=user).values_list("pk", flat=True))
    if consent_ids is None:
        consent_ids = list(A2UIConsentRecord.objects.filter(user=user)
                           .values_list("pk", flat=True))
    q = (Q(actor=user) | Q(actor_label=audit.actor_label(user))
         | Q(session_id__in=session_ids)
         | Q(target_type="a2uisessionlog", target_id__in=[str(s) for s in session_ids])
         | Q(target_type="streamtoken", target_id__in=[str(j) for j in jtis])
         | Q(target_type="a2uiconsentrecord", target_id__in=[str(c) for c in consent_ids])
         | Q(target_type="user", target_id=str(user.pk))
         # events of records gone since (a purged consent, a deleted token) name them so
         | Q(details__user=user.get_username()) | Q(details__user_id=user.pk))
    return AuditEvent.objects.filter(q).exclude(action__in=KEPT_ACTIONS)


def _row(obj, exclude=()):
    data = model_to_dict(obj, exclude=list(exclude))
    for f in obj._meta.fields:  # model_to_dict leaves out fields that are not editable
        if f.name not in data and f.name not in exclude:
            data[f.name] = f.value_from_object(obj)
    return data


def export(user, *, actor=None):
    """Everything held about ``user``, as one JSON-ready dict; audited as ``person.export``."""
    sessions = []
    for s in _sessions(user).order_by("created_at"):
        item = _row(s, exclude=("user",))
        for name, model in SESSION_CONTENT:
            item[name] = [_row(o, exclude=("session",))
                          for o in model.objects.filter(session=s).order_by("pk")]
        activity = SessionActivity.objects.filter(session=s).first()
        item["activity"] = _row(activity, exclude=("session",)) if activity else None
        sessions.append(item)
    consents = [_row(c, exclude=("user",))
                for c in A2UIConsentRecord.objects.filter(user=user).order_by("granted_at")]
    tokens = [_row(t, exclude=("user",))
              for t in StreamToken.objects.filter(user=user).order_by("issued_at")]
    events = [_row(e, exclude=("actor",))
              for e in audit_events(user).order_by("seq", "pk")]
    document = {
        "format": FORMAT,
        "generated_at": timezone.now(),
        "user": {"id": user.pk, "username": user.get_username(),
                 "email": getattr(user, "email", ""),
                 "first_name": getattr(user, "first_name", ""),
                 "last_name": getattr(user, "last_name", ""),
                 "date_joined": getattr(user, "date_joined", None),
                 "last_login": getattr(user, "last_login", None)},
        "agents_owned": list(Agent.objects.filter(owner=user).values_list("name", flat=True)),
        "sessions": sessions,
        "consents": consents,
        "stream_tokens": tokens,
        "audit_events": events,
    }
    counts = {"sessions": len(sessions), "consents": len(consents),
              "stream_tokens": len(tokens), "audit_events": len(events)}
    audit.record("person.export", actor=actor, target=("user", user.pk),
                 details={"user_id": user.pk, "counts": counts})
    return document


def dumps(document):
    import json

    return json.dumps(document, cls=DjangoJSONEncoder, ensure_ascii=False, indent=1,
                      sort_keys=True)


@dataclass
class ErasureReport:
    user_id: int
    dry_run: bool
    counts: dict = field(default_factory=dict)
    #: What a second count after the erasure still found (empty: nothing; not for a dry run).
    left: dict | None = None

    def lines(self):
        verb = "would be" if self.dry_run else "were"
        out = [f"Erasure of user #{self.user_id}"
               f"{' (dry run: nothing changed)' if self.dry_run else ''}"]
        for name, count, what in self.rows():
            out.append(f"  {name}: {count} {verb} {what}")
        if self.left is not None:
            out.append("  verified after: nothing of theirs left" if not self.left else
                       "  verified after: still held: " + ", ".join(
                           f"{name} {count}" for name, count in self.left.items()))
        return out

    def rows(self):
        """``(what, how many, what happens to them)`` for each kind of data."""
        return [(name, count, _verbs.get(name, "deleted")) for name, count in self.counts.items()]


_verbs = {"sessions": "anonymized", "audit events": "redacted",
          "live sessions": "closed", "stream tokens in force": "revoked",
          "agents owned": "disowned"}


def _content(session_ids):
    """``(name, queryset)`` of what sessions ``session_ids`` showed and awaited."""
    out = [(name.replace("_", " "), model.objects.filter(session__in=session_ids))
           for name, model in SESSION_CONTENT]
    out.append(("activities", SessionActivity.objects.filter(session__in=session_ids)))
    return out


def _counts(user):
    sessions = _sessions(user)
    counts = {
        "live sessions": sessions.filter(state__in=A2UISessionLog.LIVE_STATES).count(),
        "stream tokens in force": StreamToken.objects.filter(
            user=user, revoked_at__isnull=True, expires_at__gt=timezone.now()).count(),
        "sessions": sessions.count(),
    }
    for name, rows in _content(sessions.values("pk")):
        counts[name] = rows.count()
    counts["consent records"] = A2UIConsentRecord.objects.filter(user=user).count()
    counts["stream tokens"] = StreamToken.objects.filter(user=user).count()
    counts["agents owned"] = Agent.objects.filter(owner=user).count()
    counts["audit events"] = audit_events(user).filter(redacted_at__isnull=True).count()
    return counts


def _left(user, session_ids):
    """What is still held about ``user`` (their erased sessions' content included): the
    non-zero counts."""
    left = {name: rows.count() for name, rows in _content(session_ids)}
    left["sessions"] = _sessions(user).count()
    left["consent records"] = A2UIConsentRecord.objects.filter(user=user).count()
    left["stream tokens"] = StreamToken.objects.filter(user=user).count()
    left["agents owned"] = Agent.objects.filter(owner=user).count()
    left["audit events"] = audit_events(user, session_ids).filter(
        redacted_at__isnull=True).count()
    return {name: count for name, count in left.items() if count}


def erase(user, *, actor=None, dry_run=False, closed=None):
    """Erase what is held about ``user`` (or, with ``dry_run``, count it). Audited as
    ``person.erase``. Returns an ErasureReport whose counts are what was removed, and whose
    ``left`` is what a second count after it found (nothing, unless it failed).

    Her live sessions and stream tokens are the caller's to close and revoke first, so that
    every process's sockets are told (``a2ui.push.revocation.erase_person``, what the admin
    and ``manage.py a2ui_person erase`` run); ``closed`` counts them for the report."""
    if dry_run:
        report = ErasureReport(user_id=user.pk, dry_run=True, counts=_counts(user))
        audit.record(DRY_RUN, actor=actor, target=("user", user.pk),
                     details={"user_id": user.pk, "dry_run": True, "counts": report.counts})
        return report
    counts = dict(closed or {})
    # what the closes above recorded is about the person too: counted with the rest
    replaylog.buffer.flush_sync()  # this process's kept events are in the tables first
    for attempt in range(1, TRIES + 1):
        try:
            with transaction.atomic():
                done = dict(counts)
                session_ids = _erase_held(user, actor, done)
            break
        except OperationalError as exc:
            # a deadlock with a writer locking her sessions in another order (PostgreSQL
            # names it and rolls this back): taken again
            if attempt == TRIES or getattr(exc.__cause__, "sqlstate", None) != "40P01":
                raise
            time.sleep(0.1 * attempt)
    counts = done
    return ErasureReport(user_id=user.pk, dry_run=False, counts=counts,
                         left=_left(user, session_ids))


def _erase_held(user, actor, counts):
    """The erasure's transaction (the caller's): fence, delete, anonymize, redact, and the
    ``person.erase`` event naming what it redacted; fills ``counts``; her session ids."""
    session_ids = list(_sessions(user).values_list("pk", flat=True))
    # Every writer of these sessions' content (any process) has committed, and none
    # writes to them from the commit on (late replay events are dropped): a2ui.sessions.fence.
    fence.close(session_ids)
    jtis = list(StreamToken.objects.filter(user=user).values_list("pk", flat=True))
    consent_ids = list(A2UIConsentRecord.objects.filter(user=user)
                       .values_list("pk", flat=True))
    events = audit_events(user, session_ids, jtis, consent_ids)
    event_ids = list(events.values_list("pk", flat=True))
    for name, rows in _content(session_ids):
        counts[name] = rows.delete()[1].get(rows.model._meta.label, 0)
    counts["sessions"] = A2UISessionLog.objects.filter(pk__in=session_ids).update(
        user=None, token=None, client_info={}, close_reason="", resumable_clients=[],
        capabilities={})
    counts["consent records"] = A2UIConsentRecord.objects.filter(
        pk__in=consent_ids).delete()[1].get(A2UIConsentRecord._meta.label, 0)
    counts["stream tokens"] = StreamToken.objects.filter(
        pk__in=jtis).delete()[1].get(StreamToken._meta.label, 0)
    counts["agents owned"] = Agent.objects.filter(owner=user).update(owner=None)
    counts["audit events"], claim = auditchain.redact(
        AuditEvent.objects.filter(pk__in=event_ids),
        person_labels=(audit.actor_label(user),), person_id=user.pk)
    # in the same transaction: the chained event that names what it redacted
    audit.record(ERASE, actor=actor, target=("user", user.pk),
                 details={"user_id": user.pk, "dry_run": False, "counts": counts,
                          "redacted": claim})
    return session_ids
