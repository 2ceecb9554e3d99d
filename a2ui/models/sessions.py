"""A session and what it shows: components, v0.9 surfaces, activity, its replay events and the
idempotency keys of its pushes."""

import uuid

from django.conf import settings
from django.db import models
from django.db.models.fields.json import KeyTextTransform
from django.utils import timezone

from a2ui.core import states
from a2ui.models.agents import Agent, StreamToken

#: The name of the unique index of live sessions by AG-UI thread (``A2UISessionLog``).
AGUI_THREAD_CONSTRAINT = "a2ui_session_agui_thread_live"


class A2UISessionLog(models.Model):
    """A session (seed 000 section 6): its state, client, counters and how it ended."""

    class State(models.TextChoices):
        CONNECTED = "connected"
        INITIALIZED = "initialized"
        ACTIVE = "active"
        CLOSED = "closed"
        REJECTED = "rejected"
        TIMED_OUT = "timed_out"

    #: the states a session can still leave (``a2ui.core.states.SESSIONS``)
    LIVE_STATES = tuple(map(State, states.SESSIONS.live))

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
                  "(a2ui.sessions.clients): protocol, v0.9 catalogs, when it left.",
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
    seq = models.PositiveBigIntegerField(help_text="The session's sequence number (a2ui.infra.shared).")
    kind = models.CharField(max_length=40)
    data = models.JSONField(default=dict)
    at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["session_id", "id"]  # the column: no join (orphans stay visible)
        indexes = [models.Index(fields=["session", "id"])]

    def __str__(self):
        return f"{self.kind} #{self.seq}"


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


class PushKey(models.Model):
    """An agent's idempotency key of one push, stored in the push's own transaction.

    A retry with the same key for the same session finds it and is answered with the original
    outcome instead of being stored and shown again (``a2ui.push.keys``). Kept for
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
