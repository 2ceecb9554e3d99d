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


def _head(name):
    return AuditChainHead.objects.filter(site=name).values_list("seq", "hash").first()


def verify(name=None, *, checkpoint=None, key=None):
    """Walk the chain of site ``name``; returns an ``a2ui.core.auditchain.Result`` whose
    ``problems`` start with the first broken link. ``checkpoint`` (a dict) is checked too.

    The head is read before and after the walk (events written meanwhile move it): events
    must run to the head as it was at the start, none may be past the head at the end (every
    event commits with the head it bumped), and the head's hash must be the newest event's."""
    name = name or site()
    key = key or signing_key()
    result = chain.Result(site=name)
    before = _head(name)
    outside = AuditEvent.objects.filter(site__in=[name, ""] if name == site() else [name],
                                        seq__isnull=True)
    if outside.exists():
        pk = outside.order_by("id").values_list("id", flat=True).first()
        result.fail(f"id {pk}: no seq (inserted outside the chain, or its seq erased; "
                    f"{outside.count()} such in site {name!r})")
        return result
    anchors = _anchors(name, key, result)
    if not result.ok:
        return result
    chain.walk(_rows(name), result, anchors=anchors)
    if result.ok:
        chain.check_redactions(result)
    if not result.ok:
        return result
    last, after = result.last_seq or 0, _head(name)
    if after is None:
        if last:
            result.fail("events without a chain head (the head row was deleted)")
    elif last > after[0]:
        result.fail(f"the chain head says seq {after[0]} but events run to {last}")
    elif before is not None and before[0] > last:
        result.fail(f"events {last + 1}..{before[0]} missing after seq {last} (the newest "
                    f"events were deleted; the chain head says {before[0]})")
    elif last and after[0] == last and after[1] != result.last_hash:
        result.fail(f"the chain head's hash differs from the hash of the newest event, seq "
                    f"{last} (the head was rewritten)")
    if result.ok and checkpoint is not None:
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


def redact(queryset, person_labels=(), person_id=None):
    """Erase the personal content of these events (their digest stays, so the chain
    verifies): target id and details always; the actor label and link only where the actor
    is the person (a label in ``person_labels``, or the user ``person_id``), so an
    operator's, an agent's or the system's event still says who acted. Returns ``(how many
    were erased now, the claim)``: what the ``person.erase`` event written in the same
    transaction must carry as ``details["redacted"]`` (``a2ui.core.auditchain.erasure_claim``)
    for verification to accept these redactions."""
    rows = list(queryset.filter(redacted_at__isnull=True).values_list(
        "pk", "seq", "actor_label", "actor_id"))
    now = timezone.now()
    person = {pk for pk, _, label, actor in rows
              if label in person_labels or (person_id is not None and actor == person_id)}
    rows = [row[:3] for row in rows]
    done = 0
    for kept, pks in ((False, [pk for pk, _, _ in rows if pk in person]),
                      (True, [pk for pk, _, _ in rows if pk not in person])):
        changes = {"target_id": chain.REDACTED["target_id"],
                   "details": chain.REDACTED["details"], "redacted_at": now}
        if not kept:
            changes.update(actor_label=chain.REDACTED["actor"], actor=None)
        for i in range(0, len(pks), CHUNK):
            # The one sanctioned change of audit events (the append-only queryset refuses
            # update()); verification accepts it only as named by a person.erase event.
            done += QuerySet.update(AuditEvent.objects.filter(pk__in=pks[i:i + CHUNK]),
                                    **changes)
    claim = {"seqs": chain.ranges(seq for _, seq, _ in rows if seq is not None),
             "actors": {str(seq): label for pk, seq, label in rows
                        if pk not in person and seq is not None}}
    return done, claim


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
