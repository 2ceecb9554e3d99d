"""Retention: remove (or anonymize) session data older than a cutoff.

What goes, for data older than the cutoff (``now - days``):

* closed sessions (closed, timed out or rejected; never a live one) with what they showed and
  awaited: rendered components, pending requests and answers, v0.9 surfaces, and the events
  kept for replay (``a2ui.compliance.replay``). With
  ``anonymize=True`` the session rows stay for statistics (state, counters, dates) but lose the
  person, the token, the client info and the close reason, and their content is deleted;
* stream token records that expired before the cutoff;
* consent records no longer in force (revoked or refused before the cutoff), only when
  ``A2UI['PURGE_CONSENTS']``; records in force are the basis of current processing and stay;
* audit events, only when ``A2UI['PURGE_AUDIT']``, through the one raw delete the append-only
  AuditEvent allows, after a signed ``AuditAnchor`` at the last event of each run of the hash
  chain deleted, so that the chain still verifies from the first event kept.

Consent records that stay lose their link to a deleted session (``session`` becomes null); audit
events keep the session's id. Every real run leaves a ``retention.purge`` AuditEvent.
"""

from dataclasses import dataclass, field
from datetime import timedelta

from django.db import transaction
from django.db.models import Exists, OuterRef, Q
from django.utils import timezone

from a2ui.compliance import audit
from a2ui.compliance import chain as auditchain
from a2ui.conf import a2ui_settings
from a2ui.models import (
    A2UIConsentRecord,
    A2UISessionLog,
    AuditEvent,
    PendingRequest,
    RenderedComponent,
    SessionEvent,
    StreamToken,
    Surface,
)

BATCH = 500


@dataclass
class PurgeReport:
    cutoff: object
    dry_run: bool
    anonymize: bool
    counts: dict = field(default_factory=dict)
    kept: dict = field(default_factory=dict)

    def lines(self):
        verb = "would be" if self.dry_run else "were"
        out = [f"Retention cutoff: {self.cutoff.isoformat()}"
               f"{' (dry run: nothing changed)' if self.dry_run else ''}"]
        for name, count in self.counts.items():
            out.append(f"  {name}: {count} {verb} {_verb(name, self.anonymize)}")
        for name, why in self.kept.items():
            out.append(f"  {name}: kept ({why})")
        return out


def _verb(name, anonymize):
    return "anonymized" if anonymize and name == "sessions" else "deleted"


def _old_sessions(cutoff):
    return A2UISessionLog.objects.exclude(state__in=A2UISessionLog.LIVE_STATES).filter(
        Q(closed_at__lt=cutoff) | Q(closed_at__isnull=True, last_activity__lt=cutoff)
    )


def _old_consents(cutoff):
    return A2UIConsentRecord.objects.filter(
        Q(revoked_at__lt=cutoff) | Q(granted=False, granted_at__lt=cutoff)
    )


def purge(days=None, *, dry_run=False, anonymize=False, now=None):
    """Apply retention; returns a PurgeReport (counts of what was, or would be, removed)."""
    days = a2ui_settings.RETENTION_DAYS if days is None else days
    if isinstance(days, bool) or not isinstance(days, int) or days < 0:
        raise ValueError("days must be a whole number of days, 0 or more")
    cutoff = (now or timezone.now()) - timedelta(days=days)
    report = PurgeReport(cutoff=cutoff, dry_run=dry_run, anonymize=anonymize)
    sessions = _old_sessions(cutoff)
    if anonymize:
        sessions = sessions.filter(
            Q(user__isnull=False) | Q(token__isnull=False) | ~Q(client_info={})
            | ~Q(close_reason="")
        )
    old_ids = _old_sessions(cutoff).values("pk")
    counts = report.counts
    counts["sessions"] = sessions.count()
    counts["rendered components"] = RenderedComponent.objects.filter(session__in=old_ids).count()
    counts["pending requests"] = PendingRequest.objects.filter(session__in=old_ids).count()
    counts["surfaces"] = Surface.objects.filter(session__in=old_ids).count()
    counts["replay events"] = SessionEvent.objects.filter(session__in=old_ids).count()
    tokens = StreamToken.objects.filter(expires_at__lt=cutoff)
    counts["stream tokens"] = tokens.count()
    if a2ui_settings.PURGE_CONSENTS:
        counts["consent records"] = _old_consents(cutoff).count()
    else:
        report.kept["consent records"] = "A2UI['PURGE_CONSENTS'] is False"
    audit_qs = AuditEvent.objects.filter(at__lt=cutoff)
    if a2ui_settings.PURGE_AUDIT:
        counts["audit events"] = audit_qs.count()
    else:
        report.kept["audit events"] = "A2UI['PURGE_AUDIT'] is False"
    if dry_run:
        return report

    if anonymize:
        _anonymize(sessions, old_ids)
    else:
        _delete_in_batches(_old_sessions(cutoff))
    _delete_in_batches(tokens)
    # Replay events written for a session deleted a moment before (SessionEvent has no
    # database constraint: its batched writes take no lock on the sessions table).
    _delete_in_batches(SessionEvent.objects.filter(
        ~Exists(A2UISessionLog.objects.filter(pk=OuterRef("session_id")))))
    if a2ui_settings.PURGE_CONSENTS:
        _delete_in_batches(_old_consents(cutoff))
    anchor = None
    if a2ui_settings.PURGE_AUDIT:
        counts["audit events"], anchor = _purge_audit(cutoff)
    details = {"cutoff": cutoff.isoformat(), "days": days, "anonymize": anonymize,
               "counts": counts}
    if anchor is not None:
        details["audit_anchor"] = {"seq": anchor.seq, "hash": anchor.hash}
    audit.record("retention.purge", details=details)
    return report


def _purge_audit(cutoff):
    """Delete the audit events before ``cutoff`` (the one sanctioned removal), after writing a
    signed ``AuditAnchor`` at the last event of each run of the chain deleted (usually one run,
    the oldest events), so that verification carries on over the gap to the next event kept.
    Returns (events deleted, the newest anchor or None)."""
    name = auditchain.site()
    anchor = None
    with transaction.atomic():
        doomed = AuditEvent.objects.filter(at__lt=cutoff)
        run_ends, previous = [], None
        for seq, hash_ in (doomed.filter(site=name, seq__isnull=False).order_by("seq")
                           .values_list("seq", "chain_hash").iterator(chunk_size=BATCH * 10)):
            if previous is not None and seq != previous[0] + 1:
                run_ends.append(previous)
            previous = (seq, hash_)
        if previous is not None:
            run_ends.append(previous)
        for seq, hash_ in run_ends:
            anchor = auditchain.write_anchor(name, seq, hash_)
        deleted = doomed._raw_delete(doomed.db)
    return deleted, anchor


def _delete_in_batches(queryset):
    model = queryset.model
    while True:
        pks = list(queryset.values_list("pk", flat=True)[:BATCH])
        if not pks:
            return
        with transaction.atomic():
            model.objects.filter(pk__in=pks).delete()


def _anonymize(sessions, old_ids):
    for model in (RenderedComponent, PendingRequest, Surface, SessionEvent):
        _delete_in_batches(model.objects.filter(session__in=old_ids))
    while True:
        pks = list(sessions.values_list("pk", flat=True)[:BATCH])
        if not pks:
            return
        A2UISessionLog.objects.filter(pk__in=pks).update(
            user=None, token=None, client_info={}, close_reason=""
        )
