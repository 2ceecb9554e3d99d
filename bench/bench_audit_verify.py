"""How long ``a2ui_audit verify`` takes on a trail of 100k events (target: under 10 s).

    python bench/bench_audit_verify.py [--database-url postgres://...] [--events 100000]

Writes a chain of ``--events`` audit events (as the service would: the same link hashes, sizes
of details like real events) under a site of its own, then measures, in the same run, the
baseline (reading the same rows with the same query, no hashing) and the verification, and
prints both, their ratio and whether the target is met. The site's rows are removed at the end.
Not a test.
"""

from __future__ import annotations

import argparse
import sys
import time
import uuid
from datetime import timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
TARGET_SECONDS = 10.0


def build(site, n):
    from django.utils import timezone

    from a2ui.core import auditchain as chain
    from a2ui.models import AuditChainHead, AuditEvent

    start = timezone.now() - timedelta(days=1)
    prev, batch = chain.GENESIS, []
    for seq in range(1, n + 1):
        at = start + timedelta(microseconds=seq * 500)
        sid = uuid.uuid4()
        details = {"user_id": seq % 97, "client": {"name": "WebUI", "version": "4.0"},
                   "consent_type": "data_collection", "counts": {"a": seq, "b": [1, 2, 3]}}
        label, target_id = f"user:person{seq % 97}", str(sid)
        digest = chain.content_digest(label, target_id, details)
        hash_ = chain.link_hash(site=site, seq=seq, prev=prev, at=at, action="session.open",
                                target_type="a2uisessionlog", session_id=sid, content=digest)
        batch.append(AuditEvent(actor_label=label, action="session.open",
                                target_type="a2uisessionlog", target_id=target_id,
                                session_id=sid, details=details, at=at, site=site, seq=seq,
                                prev_hash=prev, content_digest=digest, chain_hash=hash_))
        prev = hash_
        if len(batch) == 5000:
            AuditEvent.objects.bulk_create(batch)
            batch = []
    if batch:
        AuditEvent.objects.bulk_create(batch)
    AuditChainHead.objects.update_or_create(site=site, defaults={"seq": n, "hash": prev})


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--database-url",
                        default="postgres://postgres@127.0.0.1:5432/a2ui_bench_audit")
    parser.add_argument("--events", type=int, default=100_000)
    args = parser.parse_args()
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from bench_push import django_on

    django_on(args.database_url, "audit")
    from a2ui.compliance import chain as auditchain
    from a2ui.models import AuditChainHead, AuditEvent

    site = "bench-" + uuid.uuid4().hex[:8]
    t0 = time.perf_counter()
    build(site, args.events)
    print(f"wrote {args.events} chained events (site {site}) in "
          f"{time.perf_counter() - t0:.1f} s")
    try:
        t0 = time.perf_counter()
        rows = sum(1 for _ in auditchain._rows(site))
        read = time.perf_counter() - t0
        t0 = time.perf_counter()
        result = auditchain.verify(site)
        verify = time.perf_counter() - t0
        assert result.ok and result.checked == rows == args.events, result.problems
        print(f"baseline (read the rows, no hashing): {read:.2f} s")
        print(f"verify:                               {verify:.2f} s "
              f"({args.events / verify:,.0f} events/s)")
        print(f"ratio verify / read: {verify / read:.2f}")
        print(f"target < {TARGET_SECONDS:.0f} s for {args.events} events: "
              f"{'met' if verify < TARGET_SECONDS else 'NOT met'}")
    finally:
        doomed = AuditEvent.objects.filter(site=site)
        doomed._raw_delete(doomed.db)
        AuditChainHead.objects.filter(site=site).delete()


if __name__ == "__main__":
    main()
