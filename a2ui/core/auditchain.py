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
#: What an erased event holds instead of the actor label, target id and details. The event of
#: an operator, agent or the system keeps its actor label (only the person's content goes).
REDACTED = {"actor": "erased", "target_id": "", "details": {"redacted": True}}
#: The one action whose event may redact others: its details name them (:func:`erasure_claim`).
ERASE_ACTION = "person.erase"


def ranges(seqs):
    """``[[first, last], ...]`` of the sorted whole numbers ``seqs`` (a compact list)."""
    out = []
    for seq in sorted(seqs):
        if out and seq == out[-1][1] + 1:
            out[-1][1] = seq
        else:
            out.append([seq, seq])
    return out


def erasure_claim(redacted):
    """What a ``person.erase`` event says it redacted: ``details["redacted"]`` is
    ``{"seqs": ranges, "actors": {seq: kept actor label}}`` (the events whose actor, an
    operator's, an agent's or the system's, stays). ``{seq: actor label expected}``, or None
    when it is malformed."""
    if not isinstance(redacted, dict):
        return None
    spans, actors = redacted.get("seqs"), redacted.get("actors", {})
    if not isinstance(spans, list) or not isinstance(actors, dict):
        return None
    out = {}
    for span in spans:
        if (not isinstance(span, list) or len(span) != 2
                or not all(isinstance(n, int) and not isinstance(n, bool) for n in span)
                or span[0] > span[1] or span[1] - span[0] > 10_000_000):
            return None
        for seq in range(span[0], span[1] + 1):
            out[seq] = REDACTED["actor"]
    for seq, label in actors.items():
        if not (isinstance(seq, str) and seq.isdigit() and int(seq) in out
                and isinstance(label, str)):
            return None
        out[int(seq)] = label
    return out


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
    #: seq -> (id, actor label) of each redacted event walked, and seq -> (id, claim) of each
    #: ``person.erase`` event (:func:`check_redactions`).
    redactions: dict = field(default_factory=dict)
    erasures: dict = field(default_factory=dict)

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
            result.redactions[seq] = (pk, actor_label)
            if (target_id, details) != (REDACTED["target_id"], REDACTED["details"]):
                result.fail(f"seq {seq} (id {pk}): marked erased but holds content")
        elif content_digest(actor_label, target_id, details) != cdigest:
            result.fail(f"seq {seq} (id {pk}): actor, target id or details edited "
                        f"(content does not match its digest)")
        elif action == ERASE_ACTION and isinstance(details, dict) and "redacted" in details:
            result.erasures[seq] = (pk, erasure_claim(details["redacted"]))
        if len(result.problems) < limit and link_hash(
                site=site, seq=seq, prev=prev, at=at, action=action, target_type=target_type,
                session_id=session_id, content=cdigest) != chash:
            result.fail(f"seq {seq} (id {pk}): edited (its fields do not match its hash)")
        if len(result.problems) >= limit:
            return result
        expected_seq, expected_prev = seq + 1, chash
        result.last_seq, result.last_hash = seq, chash
    return result


def check_redactions(result, *, limit=1):
    """After :func:`walk`: every redacted event must be named by a later ``person.erase``
    event of the chain (whose own content its digest and link vouch for), with the actor label
    that erasure kept; a redaction no erasure names was forged (an UPDATE of the row)."""
    expected = {}
    for erase_seq, (erase_pk, claim) in sorted(result.erasures.items()):
        if claim is None:
            result.fail(f"seq {erase_seq} (id {erase_pk}): a person.erase event whose list "
                        f"of redacted events is malformed")
            return result
        for seq, label in claim.items():
            if seq < erase_seq:
                expected.setdefault(seq, label)
    for seq, (pk, label) in sorted(result.redactions.items()):
        if seq not in expected:
            result.fail(f"seq {seq} (id {pk}): marked erased but no person.erase event "
                        f"names it (a forged redaction)")
        elif label != expected[seq]:
            result.fail(f"seq {seq} (id {pk}): erased with actor {label!r}, but its erasure "
                        f"kept {expected[seq]!r}")
        if len(result.problems) >= limit:
            return result
    return result
