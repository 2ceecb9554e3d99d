"""The audit trail's hash chain, sans-I/O: canonical serialisation, link hashes, checkpoint
signatures and the verification walk (docs/compliance.md, "The hash chain").

Each audit event of a site carries ``seq`` (1, 2, 3... in commit order), ``prev_hash`` (the
``chain_hash`` of event ``seq - 1``, or :data:`GENESIS` for the first), ``content_digest`` and
``chain_hash``:

* ``content_digest = sha256(canonical({"actor": actor_label, "details": details,
  "target_id": target_id}))``: a commitment to what may name a person. Erasure replaces those
  three with :data:`REDACTED` and keeps the digest, so the chain still verifies;
* ``chain_hash = sha256(canonical({"v": 1, "site", "seq", "prev", "at", "action",
  "target_type", "session_id", "content": content_digest}))``.

``canonical`` is JSON with sorted keys, no whitespace, UTF-8 (``ensure_ascii=False``); ``at`` is
UTC as ``YYYY-MM-DDTHH:MM:SS.ffffffZ``; ``session_id`` is the lowercase hyphenated UUID or null.
"""

import hashlib
import hmac
import json
from dataclasses import dataclass, field
from datetime import UTC

VERSION = 1
GENESIS = "0" * 64
CHECKPOINT_FORMAT = "a2ui-audit-checkpoint/1"
ALG = "HMAC-SHA256"
#: What an erased event holds instead of the actor label, target id and details.
REDACTED = {"actor": "erased", "target_id": "", "details": {"redacted": True}}


def canonical(value):
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                      allow_nan=False).encode("utf-8")


def sha256(data):
    return hashlib.sha256(data).hexdigest()


def at_text(at):
    """A datetime as the chain writes it: UTC, microseconds, ``Z``."""
    return at.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def content_digest(actor_label, target_id, details):
    return sha256(canonical({"actor": actor_label, "details": details, "target_id": target_id}))


def link_hash(*, site, seq, prev, at, action, target_type, session_id, content):
    if session_id is not None:
        session_id = str(session_id)
    return sha256(canonical({
        "v": VERSION, "site": site, "seq": seq, "prev": prev, "at": at_text(at),
        "action": action, "target_type": target_type, "session_id": session_id,
        "content": content,
    }))


# -- signatures --------------------------------------------------------------------------------

def key_id(key):
    return sha256(b"a2ui-audit-key-id:" + key)[:16]


def sign(fields, key):
    return hmac.new(key, canonical(fields), hashlib.sha256).hexdigest()


def make_checkpoint(*, site, seq, chain_hash, at, created_at, key, kind="checkpoint"):
    """A signed statement: the chain of ``site`` had ``chain_hash`` at event ``seq``."""
    body = {
        "format": CHECKPOINT_FORMAT, "kind": kind, "site": site, "seq": seq,
        "hash": chain_hash, "at": at_text(at) if at is not None else None,
        "created_at": at_text(created_at), "alg": ALG, "key_id": key_id(key),
    }
    return {**body, "signature": sign(body, key)}


def checkpoint_problem(checkpoint, key):
    """None if ``checkpoint`` is a well-formed checkpoint signed with ``key``, else why not."""
    if not isinstance(checkpoint, dict):
        return "a checkpoint is a JSON object"
    if checkpoint.get("format") != CHECKPOINT_FORMAT:
        return f"not an {CHECKPOINT_FORMAT} checkpoint"
    if checkpoint.get("alg") != ALG:
        return f"unknown signature algorithm {checkpoint.get('alg')!r}"
    seq = checkpoint.get("seq")
    if isinstance(seq, bool) or not isinstance(seq, int) or seq < 0:
        return "its seq is not a whole number"
    if not isinstance(checkpoint.get("hash"), str) or not isinstance(checkpoint.get("site"), str):
        return "its hash or site is missing"
    if checkpoint.get("key_id") != key_id(key):
        return "it was signed with another key (key_id differs)"
    body = {k: v for k, v in checkpoint.items() if k != "signature"}
    signature = checkpoint.get("signature")
    if not isinstance(signature, str) or not hmac.compare_digest(signature, sign(body, key)):
        return "its signature does not match (the checkpoint was altered)"
    return None


# -- verification ------------------------------------------------------------------------------

@dataclass
class Result:
    site: str
    checked: int = 0
    first_seq: int | None = None
    last_seq: int | None = None
    last_hash: str | None = None
    redacted: int = 0
    purged: int = 0
    problems: list = field(default_factory=list)

    @property
    def ok(self):
        return not self.problems

    def fail(self, text):
        self.problems.append(text)


def walk(rows, result, *, anchors=None, limit=1):
    """Verify ``rows`` (tuples ``(id, seq, prev_hash, chain_hash, content_digest, at, action,
    target_type, session_id, actor_label, target_id, details, redacted)`` in seq order) as the
    chain from genesis. ``anchors`` maps the seq of the last event of each run a retention
    purge deleted to its hash (signatures already checked): a gap is accepted where an anchor
    ends it and the next event links to the anchor's hash. Stops after ``limit`` problems (the
    first broken link is what matters; later ones usually follow from it)."""
    site = result.site
    anchors = anchors or {}
    expected_seq, expected_prev = 1, GENESIS
    for (pk, seq, prev, chash, cdigest, at, action, target_type, session_id, actor_label,
         target_id, details, redacted) in rows:
        if result.first_seq is None:
            result.first_seq = seq
        result.checked += 1
        if seq > expected_seq and anchors.get(seq - 1) == prev:
            result.purged += seq - expected_seq
            expected_seq, expected_prev = seq, prev
        if seq != expected_seq:
            if seq > expected_seq:
                span = (f"event {expected_seq}" if seq == expected_seq + 1
                        else f"events {expected_seq}..{seq - 1}")
                result.fail(f"seq {seq} (id {pk}): {span} missing before it (deleted; "
                            f"no purge anchor covers them)")
            else:
                result.fail(f"seq {seq} (id {pk}): out of order after seq {expected_seq - 1}")
        elif prev != expected_prev:
            result.fail(f"seq {seq} (id {pk}): prev_hash does not match the hash of seq "
                        f"{seq - 1} (events reordered, or an event inserted or rewritten)")
        if redacted:
            result.redacted += 1
            if (actor_label, target_id, details) != (
                    REDACTED["actor"], REDACTED["target_id"], REDACTED["details"]):
                result.fail(f"seq {seq} (id {pk}): marked erased but holds content")
        elif content_digest(actor_label, target_id, details) != cdigest:
            result.fail(f"seq {seq} (id {pk}): actor, target id or details edited "
                        f"(content does not match its digest)")
        if len(result.problems) < limit and link_hash(
                site=site, seq=seq, prev=prev, at=at, action=action, target_type=target_type,
                session_id=session_id, content=cdigest) != chash:
            result.fail(f"seq {seq} (id {pk}): edited (its fields do not match its hash)")
        if len(result.problems) >= limit:
            return result
        expected_seq, expected_prev = seq + 1, chash
        result.last_seq, result.last_hash = seq, chash
    return result
