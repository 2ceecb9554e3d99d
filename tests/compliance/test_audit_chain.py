"""Tier 1: the audit trail's hash chain: SQL tampering of each kind is named by
``manage.py a2ui_audit verify``; checkpoints catch deleting the newest events; retention purges
and erasure keep the chain verifiable."""

import json
from datetime import timedelta
from io import StringIO

import pytest
from django.conf import settings
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection
from django.test import override_settings
from django.utils import timezone

from a2ui.compliance import audit, purge
from a2ui.compliance import chain as auditchain
from a2ui.core import auditchain as chain
from a2ui.models import AuditAnchor, AuditChainHead, AuditEvent

pytestmark = pytest.mark.django_db
T = AuditEvent._meta.db_table


def events(n=6, user=None):
    return [audit.record("session.open", actor=user, target=("a2uisessionlog", f"s{i}"),
                         details={"i": i, "text": "naïve ✓"}) for i in range(n)]


def verify(*args):
    out = StringIO()
    call_command("a2ui_audit", "verify", *args, stdout=out)
    return out.getvalue()


def broken(*args):
    with pytest.raises(CommandError) as info:
        verify(*args)
    return str(info.value)


def sql(statement, params=()):
    with connection.cursor() as cursor:
        cursor.execute(statement, params)


def test_events_chain_in_order(user):
    rows = events(4, user)
    assert [e.seq for e in rows] == [1, 2, 3, 4]
    assert rows[0].prev_hash == chain.GENESIS
    assert all(b.prev_hash == a.chain_hash for a, b in zip(rows, rows[1:], strict=False))
    head = AuditChainHead.objects.get(site="default")
    assert (head.seq, head.hash) == (4, rows[-1].chain_hash)
    assert "verified: 4 events" in verify()
    # each verification is itself audited (and chained)
    assert AuditEvent.objects.filter(action="audit.verify", seq=5).exists()
    assert "verified: 5 events" in verify()


def test_edit_of_details_is_named(user):
    rows = events()
    sql(f"UPDATE {T} SET details = %s WHERE id = %s", ['{"i": 99}', rows[2].pk])
    assert f"seq 3 (id {rows[2].pk}): actor, target id or details edited" in broken()


def test_edit_of_a_hashed_field_is_named(user):
    rows = events()
    sql(f"UPDATE {T} SET action = 'consent.grant' WHERE id = %s", [rows[3].pk])
    assert f"seq 4 (id {rows[3].pk}): edited" in broken()


def test_edit_of_the_time_is_named(user):
    rows = events()
    sql(f"UPDATE {T} SET at = %s WHERE id = %s",
        [timezone.now() - timedelta(days=3), rows[1].pk])
    assert f"seq 2 (id {rows[1].pk}): edited" in broken()


def test_delete_is_named(user):
    rows = events()
    sql(f"DELETE FROM {T} WHERE id = %s", [rows[2].pk])
    assert f"seq 4 (id {rows[3].pk}): event 3 missing before it (deleted" in broken()


def test_delete_of_the_first_events_is_named(user):
    rows = events()
    sql(f"DELETE FROM {T} WHERE id IN (%s, %s)", [rows[0].pk, rows[1].pk])
    assert f"seq 3 (id {rows[2].pk}): events 1..2 missing before it" in broken()


def test_reorder_is_named(user):
    rows = events()
    # swap the places of events 2 and 3
    sql(f"UPDATE {T} SET seq = 5 - seq WHERE id IN (%s, %s)", [rows[1].pk, rows[2].pk])
    assert f"seq 2 (id {rows[2].pk}): prev_hash does not match" in broken()


def test_insert_is_named(user):
    rows = events()
    # an event slipped in at the end with a plausible but invented link
    sql(f"INSERT INTO {T} (actor_label, action, target_type, target_id, details, at, site, "
        f"seq, prev_hash, content_digest, chain_hash) VALUES ('system', 'consent.grant', '', "
        f"'', '{{}}', %s, 'default', 7, %s, %s, %s)",
        [timezone.now(), "ab" * 32, "cd" * 32, "ef" * 32])
    problem = broken()
    assert "seq 7 (id " in problem and "prev_hash does not match" in problem
    sql(f"DELETE FROM {T} WHERE action = 'consent.grant'")
    # one inserted outside the chain
    sql(f"INSERT INTO {T} (actor_label, action, target_type, target_id, details, at, site, "
        f"prev_hash, content_digest, chain_hash) VALUES ('system', 'consent.grant', '', '', "
        f"'{{}}', %s, '', '', '', '')", [timezone.now()])
    assert "inserted outside the chain" in broken()
    assert rows


def test_insert_with_a_correct_link_is_caught_by_the_head(user):
    events(3)
    last = AuditEvent.objects.get(seq=3)
    forged = AuditEvent(actor_label="system", action="consent.grant", at=timezone.now(),
                        site="default", seq=4, prev_hash=last.chain_hash)
    forged.content_digest = chain.content_digest("system", "", {})
    forged.chain_hash = chain.link_hash(
        site="default", seq=4, prev=last.chain_hash, at=forged.at, action=forged.action,
        target_type="", session_id=None, content=forged.content_digest)
    sql(f"INSERT INTO {T} (actor_label, action, target_type, target_id, details, at, site, "
        f"seq, prev_hash, content_digest, chain_hash) VALUES ('system', 'consent.grant', '', "
        f"'', '{{}}', %s, 'default', 4, %s, %s, %s)",
        [forged.at, forged.prev_hash, forged.content_digest, forged.chain_hash])
    assert "the chain head says seq 3 but events run to 4" in broken()


def test_deleting_the_newest_events_is_caught_by_the_head_and_a_checkpoint(tmp_path):
    events(5)
    out = StringIO()
    call_command("a2ui_audit", "checkpoint", "--out", str(tmp_path / "cp.json"), stdout=out)
    cp = json.loads((tmp_path / "cp.json").read_text())
    assert cp["seq"] == 5 and cp["format"] == chain.CHECKPOINT_FORMAT and cp["signature"]
    assert "verified" in verify("--checkpoint", str(tmp_path / "cp.json"))
    sql(f"DELETE FROM {T} WHERE seq >= 4")
    assert "events 4..7 missing after seq 3" in broken()  # the head row still says 7
    # an attacker who also winds the head back is caught by the checkpoint kept elsewhere
    last = AuditEvent.objects.get(seq=3)
    sql(f"DELETE FROM {T} WHERE seq >= 4")  # and the audit.verify event just written
    sql("UPDATE a2ui_auditchainhead SET seq = 3, hash = %s", [last.chain_hash])
    assert "verified" in verify()
    assert "cp.json: checkpoint at seq 5: the chain ends at seq 4, before" in broken(
        "--checkpoint", str(tmp_path / "cp.json"))


def test_a_rewritten_trail_is_caught_by_a_checkpoint(tmp_path):
    events(3)
    cp = auditchain.checkpoint()
    # rewrite everything consistently, as someone with the code but not the key could
    rows = list(AuditEvent.objects.order_by("seq"))
    sql(f"DELETE FROM {T}")
    sql("DELETE FROM a2ui_auditchainhead")
    for row in rows:
        AuditEvent.objects.create(actor_label=row.actor_label, action="session.other",
                                  target_type=row.target_type, target_id=row.target_id,
                                  details=row.details, at=row.at)
    result = auditchain.verify(checkpoint=cp)
    assert result.problems == ["checkpoint at seq 3: the chain's hash there differs from the "
                               "checkpoint's (the trail was rewritten up to seq 3)"]


def test_a_forged_or_foreign_checkpoint_is_refused(tmp_path):
    events(2)
    cp = auditchain.checkpoint()
    forged = {**cp, "seq": 1}
    assert "signature does not match" in auditchain.verify(checkpoint=forged).problems[0]
    foreign = chain.make_checkpoint(site="default", seq=2, chain_hash=cp["hash"], at=None,
                                    created_at=timezone.now(), key=b"another key")
    assert "another key" in auditchain.verify(checkpoint=foreign).problems[0]
    (tmp_path / "bad.json").write_text("{not json")
    assert "Cannot read checkpoint" in broken("--checkpoint", str(tmp_path / "bad.json"))


def test_checkpoint_key_from_settings():
    events(1)
    with override_settings(A2UI={**settings.A2UI, "AUDIT_CHECKPOINT_KEY": "k" * 40}):
        cp = auditchain.checkpoint()
        assert chain.checkpoint_problem(cp, b"k" * 40) is None
        assert auditchain.verify(checkpoint=cp).ok
    assert "another key" in auditchain.verify(checkpoint=cp).problems[0]


def test_checkpoint_to_stdout_is_json():
    events(2)
    out = StringIO()
    call_command("a2ui_audit", "checkpoint", stdout=out)
    assert json.loads(out.getvalue())["seq"] == 2
    assert AuditEvent.objects.filter(action="audit.checkpoint").exists()


def test_checkpoint_to_a_file_and_a_file_that_cannot_be_written(tmp_path):
    events(2)
    out = StringIO()
    call_command("a2ui_audit", "checkpoint", "--out", str(tmp_path / "cp.json"), stdout=out)
    assert "at seq 2 written to" in out.getvalue()
    assert json.loads((tmp_path / "cp.json").read_text())["seq"] == 2
    with pytest.raises(CommandError, match="Cannot write"):
        call_command("a2ui_audit", "checkpoint", "--out", str(tmp_path / "no" / "cp.json"))


def test_purge_keeps_the_chain_verifiable():
    old = timezone.now() - timedelta(days=200)
    for i in range(3):
        AuditEvent.objects.create(actor_label="system", action="session.open", at=old,
                                  details={"i": i})
    events(2)
    AuditEvent.objects.create(actor_label="system", action="session.closed", at=old)
    events(1)
    with override_settings(A2UI={**settings.A2UI, "PURGE_AUDIT": True}):
        purge.purge(90)
    assert AuditEvent.objects.filter(at__lt=timezone.now() - timedelta(days=90)).count() == 0
    assert sorted(AuditAnchor.objects.values_list("seq", flat=True)) == [3, 6]
    details = AuditEvent.objects.get(action="retention.purge").details
    assert details["audit_anchor"]["seq"] == 6
    result = auditchain.verify()
    assert result.ok, result.problems
    assert result.purged == 4 and result.first_seq == 4
    # an anchor altered in the database is named, and so is a gap it no longer covers
    AuditAnchor.objects.filter(seq=3).update(seq=2)
    assert "purge anchor at seq 2" in auditchain.verify().problems[0]


def test_redacted_event_verifies_but_cannot_hold_other_content(user):
    rows = events(3, user)
    done, claim = auditchain.redact(AuditEvent.objects.filter(pk=rows[1].pk),
                                    person_labels=(audit.actor_label(user),))
    assert done == 1 and claim == {"seqs": [[2, 2]], "actors": {}}
    audit.record(chain.ERASE_ACTION, target=("user", user.pk), details={"redacted": claim})
    row = AuditEvent.objects.get(pk=rows[1].pk)
    assert (row.actor_label, row.target_id, row.details, row.actor) == (
        "erased", "", {"redacted": True}, None)
    assert auditchain.verify().ok
    sql(f"UPDATE {T} SET details = %s WHERE id = %s", ['{"i": 1}', rows[1].pk])
    assert "marked erased but holds content" in auditchain.verify().problems[0]


def test_existing_rows_are_backfilled_by_the_migration():
    from importlib import import_module

    from django.db.migrations.executor import MigrationExecutor

    migration = import_module("a2ui.migrations.0013_audit_chain")
    for at, details in ((timezone.now() - timedelta(days=1), '{"a": 1}'), (timezone.now(), "{}")):
        sql(f"INSERT INTO {T} (actor_label, action, target_type, target_id, details, at, site, "
            f"prev_hash, content_digest, chain_hash) VALUES ('system', 'old.event', '', '', "
            f"%s, %s, '', '', '', '')", [details, at])
    apps = MigrationExecutor(connection).loader.project_state(("a2ui", "0013_audit_chain")).apps
    migration.backfill_chain(apps, connection.schema_editor())
    assert auditchain.verify().ok
    assert list(AuditEvent.objects.order_by("seq").values_list("seq", "details")) == [
        (1, {"a": 1}), (2, {})]
    assert AuditChainHead.objects.get(site="default").seq == 2


@pytest.mark.parametrize("bad", [{"AUDIT_SITE": ""}, {"AUDIT_SITE": "x" * 65},
                                 {"AUDIT_SITE": 3}, {"AUDIT_CHECKPOINT_KEY": "short"},
                                 {"AUDIT_CHECKPOINT_KEY": 12345678901234567}])
def test_bad_audit_settings_are_a_system_check_error(bad):
    from a2ui.checks import check_a2ui_settings

    with override_settings(A2UI={**settings.A2UI, **bad}):
        assert [e.id for e in check_a2ui_settings(None)] == ["a2ui.E027"]
    with override_settings(A2UI={**settings.A2UI, "AUDIT_SITE": "eu-1",
                                 "AUDIT_CHECKPOINT_KEY": b"k" * 32}):
        assert check_a2ui_settings(None) == []
