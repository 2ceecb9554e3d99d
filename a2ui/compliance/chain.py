"""The audit trail's hash chain: chained inserts, verification, checkpoints and purge anchors.

Every AuditEvent insert (``AuditEvent.save``) runs :func:`chained_insert` inside one
transaction: it first bumps the site's ``AuditChainHead`` row with an UPDATE that returns the
head (which takes the row lock on PostgreSQL, the write lock on SQLite), so concurrent writers
of every process queue there and ``seq`` follows commit order with no gap; it then inserts the
event with its link and stores the new head hash. The hashing and the walk are in
``a2ui.core.auditchain``.
"""

import hashlib
import json

from django.conf import settings
from django.db import transaction
from django.db.models import QuerySet
from django.utils import timezone

from a2ui.conf import a2ui_settings
from a2ui.core import auditchain as chain
from a2ui.models import AuditAnchor, AuditChainHead, AuditEvent
from a2ui.models import audit as audit_models

CHUNK = 5000
ROW_FIELDS = ("id", "seq", "prev_hash", "chain_hash", "content_digest", "at", "action",
              "target_type", "session_id", "actor_label", "target_id", "details", "redacted_at")


site = audit_models.site


def signing_key():
    """``A2UI['AUDIT_CHECKPOINT_KEY']``, or a key derived from SECRET_KEY."""
    key = a2ui_settings.AUDIT_CHECKPOINT_KEY
    if key:
        return key.encode() if isinstance(key, str) else bytes(key)
    secret = settings.SECRET_KEY
    secret = secret.encode() if isinstance(secret, str) else secret
    return hashlib.sha256(b"a2ui.audit.checkpoint-key\x00" + secret).digest()


# -- verification ------------------------------------------------------------------------------

def _rows(name):
    qs = (AuditEvent.objects.filter(site=name, seq__isnull=False).order_by("seq")
          .values_list(*ROW_FIELDS))
    for row in qs.iterator(chunk_size=CHUNK):
        yield row[:-1] + (row[-1] is not None,)


def _anchors(name, key, result):
    """The site's purge anchors, seq -> hash; an altered one is a problem (and not used)."""
    out = {}
    for anchor in AuditAnchor.objects.filter(site=name).order_by("seq"):
        cp = anchor.checkpoint
        problem = chain.checkpoint_problem(cp, key)
        if problem is None and (cp.get("kind") != "anchor" or cp["seq"] != anchor.seq
                                or cp["hash"] != anchor.hash or cp["site"] != name):
            problem = "its row differs from its signed checkpoint"
        if problem:
            result.fail(f"purge anchor at seq {anchor.seq} (id {anchor.pk}): {problem}")
            continue
        out[anchor.seq] = anchor.hash
    return out


def verify(name=None, *, checkpoint=None, key=None):
    """Walk the chain of site ``name``; returns an ``a2ui.core.auditchain.Result`` whose
    ``problems`` start with the first broken link. ``checkpoint`` (a dict) is checked too."""
    name = name or site()
    key = key or signing_key()
    result = chain.Result(site=name)
    anchors = _anchors(name, key, result)
    if not result.ok:
        return result
    chain.walk(_rows(name), result, anchors=anchors)
    if not result.ok:
        return result
    outside = AuditEvent.objects.filter(seq__isnull=True)
    if outside.exists():
        pk = outside.order_by("id").values_list("id", flat=True).first()
        result.fail(f"id {pk}: inserted outside the chain (no seq; {outside.count()} such)")
        return result
    head = AuditChainHead.objects.filter(site=name).first()
    if head is not None and head.seq != (result.last_seq or 0):
        last = result.last_seq or 0
        if head.seq > last:
            result.fail(f"events {last + 1}..{head.seq} missing after seq {last} (the newest "
                        f"events were deleted; the chain head says {head.seq})")
        else:
            result.fail(f"the chain head says seq {head.seq} but events run to {last}")
        return result
    if checkpoint is not None:
        check_checkpoint(checkpoint, result, key=key)
    return result


def check_checkpoint(checkpoint, result, *, key=None):
    """Check a verified chain (``result``) against a signed checkpoint written earlier."""
    key = key or signing_key()
    name = result.site
    problem = chain.checkpoint_problem(checkpoint, key)
    if problem:
        result.fail(f"checkpoint: {problem}")
        return
    if checkpoint["site"] != name:
        result.fail(f"checkpoint: it is for site {checkpoint['site']!r}, not {name!r}")
        return
    seq = checkpoint["seq"]
    if seq == 0:
        return
    last = result.last_seq or 0
    if seq > last:
        result.fail(f"checkpoint at seq {seq}: the chain ends at seq {last}, before the "
                    f"checkpoint (the newest events were deleted)")
        return
    row = AuditEvent.objects.filter(site=name, seq=seq).values_list("chain_hash", flat=True)
    stored = row.first()
    if stored is None:
        anchor = AuditAnchor.objects.filter(site=name, seq__gte=seq).exists()
        if not anchor:
            result.fail(f"checkpoint at seq {seq}: the event is missing")
        return  # purged since the checkpoint: the anchor's chain carries on from it
    if stored != checkpoint["hash"]:
        result.fail(f"checkpoint at seq {seq}: the chain's hash there differs from the "
                    f"checkpoint's (the trail was rewritten up to seq {seq})")


# -- checkpoints and anchors -------------------------------------------------------------------

def checkpoint(name=None, *, key=None):
    """A signed checkpoint of the chain's newest event (a dict, JSON-ready)."""
    name = name or site()
    key = key or signing_key()
    with transaction.atomic():
        head = AuditChainHead.objects.filter(site=name).first()
        seq, hash_ = (head.seq, head.hash) if head else (0, chain.GENESIS)
        at = (AuditEvent.objects.filter(site=name, seq=seq).values_list("at", flat=True).first()
              if seq else None)
    return chain.make_checkpoint(site=name, seq=seq, chain_hash=hash_, at=at,
                                 created_at=timezone.now(), key=key)


def write_anchor(name, seq, hash_, *, key=None):
    """Record a purge anchor: the chain had ``hash_`` at ``seq`` (the last event deleted)."""
    cp = chain.make_checkpoint(site=name, seq=seq, chain_hash=hash_, at=None,
                               created_at=timezone.now(), key=key or signing_key(),
                               kind="anchor")
    return AuditAnchor.objects.create(site=name, seq=seq, hash=hash_, checkpoint=cp)


def dumps(checkpoint_dict):
    return json.dumps(checkpoint_dict, sort_keys=True, indent=2)


def redact(queryset):
    """Erase the actor label, target id and details of these events (their digest stays, so
    the chain verifies). Returns how many were erased now."""
    pks = list(queryset.filter(redacted_at__isnull=True).values_list("pk", flat=True))
    done = 0
    for i in range(0, len(pks), CHUNK):
        # The one sanctioned change of audit events (the append-only queryset refuses update()).
        done += QuerySet.update(
            AuditEvent.objects.filter(pk__in=pks[i:i + CHUNK]),
            actor_label=chain.REDACTED["actor"], target_id=chain.REDACTED["target_id"],
            details=chain.REDACTED["details"], actor=None, redacted_at=timezone.now())
    return done


# -- audited entry points (the command and the admin) ----------------------------------------

def run_verify(*, actor=None, site_name=None, checkpoints=()):
    """Verify the chain (and each ``(label, checkpoint dict)``); audited as ``audit.verify``."""
    from a2ui.compliance import audit

    result = verify(site_name)
    for label, cp in checkpoints:
        if not result.ok:
            break
        check_checkpoint(cp, result)
        if not result.ok:
            result.problems[-1] = f"{label}: {result.problems[-1]}"
    audit.record("audit.verify", actor=actor, details={
        "site": result.site, "ok": result.ok, "checked": result.checked,
        "last_seq": result.last_seq, "checkpoints": len(checkpoints),
        "problem": result.problems[0] if result.problems else None})
    return result


def write_checkpoint(*, actor=None, site_name=None):
    """A signed checkpoint of the newest event; audited as ``audit.checkpoint``."""
    from a2ui.compliance import audit

    cp = checkpoint(site_name)
    audit.record("audit.checkpoint", actor=actor, details={
        "site": cp["site"], "seq": cp["seq"], "hash": cp["hash"]})
    return cp
