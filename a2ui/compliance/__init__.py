"""Compliance: the audit trail and its hash chain, replay, a person's data (export, erasure)
and retention (purge)."""
