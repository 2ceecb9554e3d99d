"""The data model: what a session shows, what it awaits, who agreed to what, and who did what.

Everything two Daphne processes must agree on lives here (or in Redis), never in a
process-local dict: a reconnecting client, or an answer that arrives at another process, finds
its state in these tables.
"""

import uuid

from django.conf import settings
from django.core.exceptions import PermissionDenied
from django.db import models
from django.db.models.fields.json import KeyTextTransform
from django.utils import timezone

#: The name of the unique index of live sessions by AG-UI thread (``A2UISessionLog``).
AGUI_THREAD_CONSTRAINT = "a2ui_session_agui_thread_live"


class Agent(models.Model):
    """A registered agent. Its API key is stored only as a SHA-256 hash; see a2ui.tokens."""

    name = models.SlugField(max_length=64, unique=True)
    display_name = models.CharField(max_length=100, blank=True)
    icon_url = models.URLField(blank=True, help_text="Shown to users as the agent's icon.")
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
        related_name="a2ui_agents",
    )
    key_prefix = models.CharField(max_length=16, unique=True, editable=False)
    key_hash = models.CharField(max_length=64, editable=False)
    is_active = models.BooleanField(default=True)
    max_concurrent_sessions = models.PositiveIntegerField(
        null=True, blank=True, help_text="Empty: A2UI['MAX_CONCURRENT_SESSIONS_PER_AGENT']."
    )
    created_at = models.DateTimeField(default=timezone.now, editable=False)
    revoked_at = models.DateTimeField(null=True, blank=True, editable=False)

    class Meta:
        ordering = ["name"]

    def __str__(self):
        return self.name

    @property
    def label(self):
        return self.display_name or self.name

    def clean(self):
        """The icon is shown to people: the one URL policy (a2ui.core.content.urls) applies, which
        refuses what Django's URLField allows (ftp, credentials, bracketed hosts...)."""
        from django.core.exceptions import ValidationError

        from a2ui.core.content.urls import url_problem

        super().clean()
        if self.icon_url:
            problem = url_problem(self.icon_url, allow_relative=False)
            if problem is not None:
                raise ValidationError({"icon_url": f"Not an acceptable icon URL: {problem}."})

    def session_limit(self):
        from a2ui.conf import a2ui_settings

        return self.max_concurrent_sessions or a2ui_settings.MAX_CONCURRENT_SESSIONS_PER_AGENT


class StreamToken(models.Model):
    """One issued stream token: its id (jti) and lifecycle, never the token itself."""

    TYPE_STREAM_A2UI = "stream_a2ui"
    TYPE_STREAM_MCP = "stream_mcp"
    TYPE_STREAM_AGUI = "stream_agui"
    TYPES = [(TYPE_STREAM_A2UI, "A2UI stream"), (TYPE_STREAM_MCP, "MCP (a person's UI at /mcp)"),
             (TYPE_STREAM_AGUI, "AG-UI WebSocket (/ws/agui)")]

    jti = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="a2ui_stream_tokens"
    )
    agent = models.ForeignKey(Agent, null=True, on_delete=models.CASCADE, related_name="+")
    token_type = models.CharField(max_length=32, choices=TYPES, default=TYPE_STREAM_A2UI)
    issued_at = models.DateTimeField(default=timezone.now)
    expires_at = models.DateTimeField(db_index=True)
    revoked_at = models.DateTimeField(null=True, blank=True)
    revoked_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
        related_name="+",
    )

    class Meta:
        ordering = ["-issued_at"]

    def __str__(self):
        return f"{self.token_type} {self.jti}"

    @property
    def state(self):
        if self.revoked_at:
            return "revoked"
        if self.expires_at <= timezone.now():
            return "expired"
        return "active"


class A2UISessionLog(models.Model):
    """A session (seed 000 section 6): its state, client, counters and how it ended."""

    class State(models.TextChoices):
        CONNECTED = "connected"
        INITIALIZED = "initialized"
        ACTIVE = "active"
        CLOSED = "closed"
        REJECTED = "rejected"
        TIMED_OUT = "timed_out"

    LIVE_STATES = (State.CONNECTED, State.INITIALIZED, State.ACTIVE)

    session_id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    agent = models.ForeignKey(
        Agent, null=True, on_delete=models.SET_NULL, related_name="sessions"
    )
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL,
        related_name="a2ui_sessions",
    )
    token = models.ForeignKey(
        StreamToken, null=True, blank=True, on_delete=models.SET_NULL, related_name="sessions"
    )
    state = models.CharField(
        max_length=16, choices=State.choices, default=State.CONNECTED, db_index=True
    )
    client_info = models.JSONField(default=dict, blank=True)
    capabilities = models.JSONField(default=dict, blank=True)
    message_count = models.PositiveIntegerField(default=0)
    components_rendered = models.PositiveIntegerField(default=0)
    inputs_requested = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(default=timezone.now, db_index=True)
    last_activity = models.DateTimeField(default=timezone.now)
    detached_at = models.DateTimeField(
        null=True, blank=True, help_text="When its last socket went away; resumable until then."
    )
    closed_at = models.DateTimeField(null=True, blank=True)
    close_reason = models.CharField(max_length=200, blank=True)
    surface_seq = models.PositiveBigIntegerField(
        default=0, help_text="Sequence number of the last A2UI v0.9 surface message pushed."
    )
    resumable_clients = models.JSONField(
        default=list, blank=True,
        help_text="What each client that left within the resume window declared "
                  "(a2ui.services.clients): protocol, v0.9 catalogs, when it left.",
    )

    class Meta:
        ordering = ["-created_at"]
        verbose_name = "A2UI session"
        permissions = [("view_replay", "Can replay what the person saw in a session")]
        indexes = [models.Index(fields=["agent", "state"])]
        constraints = [
            # One live session per person, agent and AG-UI thread id (a2ui.agui1.threads): of
            # concurrent first runs of a new thread, one session INSERT wins.
            models.UniqueConstraint(
                models.F("user"), models.F("agent"),
                KeyTextTransform("agui_thread_id", "client_info"),
                condition=models.Q(state__in=["connected", "initialized", "active"]),
                name=AGUI_THREAD_CONSTRAINT,
            ),
        ]

    def __str__(self):
        return str(self.session_id)

    @property
    def is_live(self):
        return self.state in self.LIVE_STATES


class SessionEvent(models.Model):
    """One event of a session as its clients got it (``a2ui.core.events``), kept for replay
    (``a2ui.core.replay``): the components, requests, v0.9 surface batches and activity, in
    the session's order. Deleted with its session (retention purges the session)."""

    id = models.BigAutoField(primary_key=True)
    # No database constraint: the replay flusher's batched INSERTs then take no lock on the
    # sessions table (an INSERT's key check beside a purge or a TRUNCATE of both tables could
    # deadlock). Django's CASCADE still deletes the rows with their session; a row written
    # for a session deleted within REPLAY_FLUSH_SECONDS is an orphan `a2ui_purge` removes.
    session = models.ForeignKey(
        A2UISessionLog, on_delete=models.CASCADE, related_name="events", db_constraint=False
    )
    seq = models.PositiveBigIntegerField(help_text="The session's sequence number (a2ui.services.shared).")
    kind = models.CharField(max_length=40)
    data = models.JSONField(default=dict)
    at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["session_id", "id"]  # the column: no join (orphans stay visible)
        indexes = [models.Index(fields=["session", "id"])]

    def __str__(self):
        return f"{self.kind} #{self.seq}"


class A2UIConsentRecord(models.Model):
    """A consent given or refused in a session (seed 000 section 8.4)."""

    session = models.ForeignKey(
        A2UISessionLog, null=True, blank=True, on_delete=models.SET_NULL, related_name="consents"
    )
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL,
        related_name="a2ui_consents",
    )
    consent_type = models.CharField(max_length=64, db_index=True)
    granted = models.BooleanField()
    granted_at = models.DateTimeField(default=timezone.now)
    revoked_at = models.DateTimeField(null=True, blank=True)
    revoked_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
        related_name="+",
    )

    class Meta:
        ordering = ["-granted_at"]
        verbose_name = "A2UI consent record"

    def __str__(self):
        return f"{self.consent_type}: {'granted' if self.granted else 'refused'}"

    @property
    def is_active(self):
        return self.granted and self.revoked_at is None


class RenderedComponent(models.Model):
    """What a session shows now, so a reconnecting client gets its screen back."""

    session = models.ForeignKey(
        A2UISessionLog, on_delete=models.CASCADE, related_name="components"
    )
    component_id = models.CharField(max_length=128)
    component_type = models.CharField(max_length=16)
    data = models.JSONField(default=dict)
    metadata = models.JSONField(default=dict, blank=True)
    position = models.PositiveIntegerField(default=0)
    expires_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["position"]
        constraints = [
            models.UniqueConstraint(fields=["session", "component_id"], name="a2ui_component_uniq")
        ]

    def __str__(self):
        return f"{self.component_type} {self.component_id}"


class PendingRequest(models.Model):
    """A ui.request_input or ui.confirm awaiting the user's answer, resolvable by any process."""

    KIND_INPUT = "input"
    KIND_CONFIRM = "confirm"
    KINDS = [(KIND_INPUT, "input"), (KIND_CONFIRM, "confirm")]

    class Status(models.TextChoices):
        PENDING = "pending"
        ANSWERED = "answered"
        TIMED_OUT = "timed_out"
        CANCELLED = "cancelled"

    session = models.ForeignKey(
        A2UISessionLog, on_delete=models.CASCADE, related_name="pending_requests"
    )
    request_id = models.CharField(max_length=128)
    kind = models.CharField(max_length=8, choices=KINDS)
    params = models.JSONField(default=dict)
    content_hash = models.CharField(
        max_length=64, blank=True, default="",
        help_text="SHA-256 of the request's kind and params: a retry under the same request_id "
                  "must match it.",
    )
    deadline = models.DateTimeField()
    status = models.CharField(
        max_length=12, choices=Status.choices, default=Status.PENDING, db_index=True
    )
    answer = models.JSONField(null=True, blank=True)
    reply_channel = models.CharField(max_length=200, blank=True)
    rpc_id = models.JSONField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    resolved_at = models.DateTimeField(null=True, blank=True)
    delivered_at = models.DateTimeField(
        null=True, blank=True,
        help_text="When an agent received the outcome (answer, timeout or cancel).",
    )

    class Meta:
        ordering = ["created_at"]
        constraints = [
            models.UniqueConstraint(fields=["session", "request_id"], name="a2ui_request_uniq")
        ]

    def __str__(self):
        return f"{self.kind} {self.request_id} ({self.status})"


class Surface(models.Model):
    """An A2UI v0.9 surface of a session: its whole state as a.v09's SurfaceState dict."""

    session = models.ForeignKey(A2UISessionLog, on_delete=models.CASCADE, related_name="surfaces")
    surface_id = models.CharField(max_length=128)
    catalog_id = models.CharField(max_length=500)
    state = models.JSONField(default=dict)
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["created_at"]
        constraints = [
            models.UniqueConstraint(fields=["session", "surface_id"], name="a2ui_surface_uniq")
        ]

    def __str__(self):
        return self.surface_id


class SessionActivity(models.Model):
    """A session's activity (``a2ui.core.activity``): the state document, the recent
    transcript, tool calls, plans, resource tree, roster and open artifacts, one row per
    session, one column per part (an event rewrites only its part)."""

    session = models.OneToOneField(A2UISessionLog, on_delete=models.CASCADE, primary_key=True,
                                   related_name="activity")
    state = models.JSONField(default=dict)
    transcript = models.JSONField(default=list)
    tool_calls = models.JSONField(default=list)
    plans = models.JSONField(default=list)
    resources = models.JSONField(null=True, blank=True)
    roster = models.JSONField(null=True, blank=True)
    artifacts = models.JSONField(default=list)
    updated_at = models.DateTimeField(default=timezone.now)

    PARTS = ("state", "transcript", "tool_calls", "plans", "resources", "roster", "artifacts")

    class Meta:
        verbose_name_plural = "session activities"

    def __str__(self):
        return f"activity of {self.session_id}"


class AgentRun(models.Model):
    """One run of an agent for a person (AG-UI 1.0 ``RUN_STARTED`` ... ``RUN_FINISHED``).

    At most one runs per session at a time; whoever ends it (the agent, an interrupt, the
    timeout, the person leaving) does so with one conditional UPDATE on ``status='running'``.
    """

    class Status(models.TextChoices):
        RUNNING = "running"
        FINISHED = "finished"
        ERROR = "error"
        INTERRUPTED = "interrupted"
        TIMED_OUT = "timed_out"
        CANCELLED = "cancelled"

    session = models.ForeignKey(A2UISessionLog, on_delete=models.CASCADE, related_name="runs")
    run_id = models.CharField(max_length=200)
    thread_id = models.CharField(max_length=200)
    status = models.CharField(max_length=12, choices=Status.choices, default=Status.RUNNING)
    notice = models.JSONField(default=dict, help_text="What the agent was told at the start.")
    message_ids = models.JSONField(
        default=list, blank=True,
        help_text="The ids of the run's candidate new messages: seen by the session from now on.")
    outcome = models.JSONField(default=dict, blank=True)
    started_at = models.DateTimeField(default=timezone.now)
    heartbeat_at = models.DateTimeField(default=timezone.now)
    ended_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["started_at"]
        constraints = [
            models.UniqueConstraint(fields=["session", "run_id"], name="a2ui_run_uniq"),
            models.UniqueConstraint(fields=["session"], condition=models.Q(status="running"),
                                    name="a2ui_one_running_run"),
        ]

    def __str__(self):
        return f"run {self.run_id} ({self.status})"


class PushKey(models.Model):
    """An agent's idempotency key of one push, stored in the push's own transaction.

    A retry with the same key for the same session finds it and is answered with the original
    outcome instead of being stored and shown again (``a2ui.services.outcomes``). Kept for
    ``A2UI['IDEMPOTENCY_KEY_TTL_SECONDS']`` (the housekeeping sweep deletes older ones) and
    never longer than its session.
    """

    session = models.ForeignKey(A2UISessionLog, on_delete=models.CASCADE, related_name="+")
    key = models.CharField(max_length=128)
    fingerprint = models.CharField(max_length=64, help_text="What was pushed (a hash).")
    outcome = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(default=timezone.now, db_index=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["session", "key"], name="a2ui_push_key_uniq"),
        ]

    def __str__(self):
        return f"push key {self.key}"


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
    # The hash chain (a2ui.core.auditchain, a2ui.services.auditchain): set on insert.
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
        from a2ui.services.auditchain import chained_insert  # the service imports this module

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


# Remote agents' transports and runs (a2ui.remote, docs/remote-agents.md).
from a2ui.remote.models import RemoteAgent, RemoteRun  # noqa: E402, F401
