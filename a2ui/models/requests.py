"""What an agent asks a person: a pending input or confirm request and its outcome."""

from django.db import models
from django.utils import timezone

from a2ui.models.sessions import A2UISessionLog


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
