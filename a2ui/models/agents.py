"""Who connects: registered agents and the stream tokens issued to people."""

import uuid

from django.conf import settings
from django.db import models
from django.utils import timezone


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

    jti = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="a2ui_stream_tokens"
    )
    agent = models.ForeignKey(Agent, null=True, on_delete=models.CASCADE, related_name="+")
    #: one of the registered adapters' types (``a2ui.tokens.stream_token_types``)
    token_type = models.CharField(max_length=32, default="stream_a2ui")
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
