"""Who did what: the append-only audit trail, its hash chain's head and its anchors."""

from django.conf import settings
from django.core.exceptions import PermissionDenied
from django.db import IntegrityError, connections, models, transaction
from django.utils import timezone

from a2ui.conf import a2ui_settings
from a2ui.core import auditchain as chain
from a2ui.infra import sql
from a2ui.models.agents import Agent


class AuditEventQuerySet(models.QuerySet):
    def update(self, **kwargs):
        raise PermissionDenied("Audit events are append-only.")

    def delete(self):
        raise PermissionDenied("Audit events are append-only.")


class AuditEvent(models.Model):
    """An append-only record of who did what: never changed, never deleted through the ORM.

    Retention (a2ui_purge) is the one sanctioned removal, and it uses a raw delete so that
    nothing else can by accident.
    """

    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
        related_name="+",
    )
    actor_label = models.CharField(max_length=150, help_text="user:NAME, agent:NAME or system")
    action = models.CharField(max_length=64, db_index=True)
    target_type = models.CharField(max_length=64, blank=True)
    target_id = models.CharField(max_length=100, blank=True)
    session_id = models.UUIDField(null=True, blank=True, db_index=True)
    agent = models.ForeignKey(
        Agent, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    details = models.JSONField(default=dict, blank=True)
    at = models.DateTimeField(default=timezone.now, db_index=True)
    # The hash chain (a2ui.core.auditchain, a2ui.compliance.chain): set on insert.
    site = models.CharField(max_length=64, default="", editable=False)
    seq = models.PositiveBigIntegerField(null=True, blank=True, editable=False)
    prev_hash = models.CharField(max_length=64, blank=True, default="", editable=False)
    content_digest = models.CharField(max_length=64, blank=True, default="", editable=False)
    chain_hash = models.CharField(max_length=64, blank=True, default="", editable=False)
    redacted_at = models.DateTimeField(
        null=True, blank=True, editable=False,
        help_text="When the actor label, target id and details were erased (the digest stays).",
    )

    objects = AuditEventQuerySet.as_manager()

    class Meta:
        ordering = ["-at", "-id"]
        # Not unique: the head row's lock already makes seq unique for every writer, and a row
        # slipped in by hand must be named by verification, not make every later insert fail.
        indexes = [models.Index(fields=["site", "seq"], name="a2ui_audit_chain_seq")]
        permissions = [
            ("verify_auditevent", "Can verify the audit trail and write checkpoints"),
            ("export_person", "Can export everything held about one person"),
            ("erase_person", "Can erase everything held about one person"),
        ]

    def __str__(self):
        return f"{self.at:%Y-%m-%d %H:%M:%S} {self.actor_label} {self.action}"

    def save(self, *args, **kwargs):
        if self.pk is not None and not self._state.adding:
            raise PermissionDenied("Audit events are append-only.")
        chained_insert(self, lambda: super(AuditEvent, self).save(*args, **kwargs))

    def delete(self, *args, **kwargs):
        raise PermissionDenied("Audit events are append-only.")


class AuditChainHead(models.Model):
    """The newest link of a site's audit chain. Every audit insert updates this one row first,
    inside its transaction: the row lock orders writers of every process (commit order)."""

    site = models.CharField(max_length=64, primary_key=True)
    seq = models.PositiveBigIntegerField(default=0)
    hash = models.CharField(max_length=64)

    def __str__(self):
        return f"{self.site} @ {self.seq}"


class AuditAnchor(models.Model):
    """A signed statement written by a retention purge: the chain of ``site`` had ``hash`` at
    ``seq``, the last event it deleted. Verification starts after it."""

    site = models.CharField(max_length=64)
    seq = models.PositiveBigIntegerField()
    hash = models.CharField(max_length=64)
    checkpoint = models.JSONField(help_text="The signed checkpoint (a2ui.core.auditchain).")
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["site", "-seq"]

    def __str__(self):
        return f"anchor {self.site} @ {self.seq}"


# The hash chain: every insert takes the site's next link --------------------------------------


def site():
    """This deployment's chain name (``A2UI['AUDIT_SITE']``)."""
    return a2ui_settings.AUDIT_SITE


def _bump_head(name):
    """``(seq, hash)`` of the head once this writer took the next number; the head's lock is
    held until the transaction commits (:func:`bump_audit_head`)."""
    link = bump_audit_head(name)
    if link is not None:
        return link
    try:
        with transaction.atomic():
            AuditChainHead.objects.create(site=name, seq=0, hash=chain.GENESIS)
    except IntegrityError:
        pass  # another writer created it first
    return bump_audit_head(name)


def chained_insert(event, insert):
    """Give ``event`` its place in the chain and ``insert()`` it, in one transaction."""
    with transaction.atomic():
        name = event.site or site()
        event.site = name
        event.seq, event.prev_hash = _bump_head(name)
        if event.redacted_at is None:
            event.content_digest = chain.content_digest(
                event.actor_label, event.target_id, event.details)
        event.chain_hash = chain.link_hash(
            site=name, seq=event.seq, prev=event.prev_hash, at=event.at, action=event.action,
            target_type=event.target_type, session_id=event.session_id,
            content=event.content_digest)
        insert()
        AuditChainHead.objects.filter(site=name).update(hash=event.chain_hash)


def bump_audit_head(site):
    """``(seq, hash)`` of the site's audit chain head once this writer took the next number,
    or None when the site has no head yet: one ``UPDATE ... RETURNING`` where the database has
    it (it holds the head's lock until the transaction commits), else the UPDATE and a read."""
    connection = connections["default"]
    table, cols = sql.names(AuditChainHead)
    statement = (f"UPDATE {table} SET {cols['seq']} = {cols['seq']} + 1 WHERE {cols['site']} = %s")
    with connection.cursor() as cursor:
        if sql.returning(connection):
            cursor.execute(f"{statement} RETURNING {cols['seq']}, {cols['hash']}", [site])
            return cursor.fetchone()
        cursor.execute(statement, [site])
        if not cursor.rowcount:
            return None
        cursor.execute(f"SELECT {cols['seq']}, {cols['hash']} FROM {table} "
                       f"WHERE {cols['site']} = %s", [site])
        return cursor.fetchone()
