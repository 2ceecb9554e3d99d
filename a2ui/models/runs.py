"""AG-UI 1.0 runs of a session."""

from django.db import models
from django.utils import timezone

from a2ui.models.sessions import A2UISessionLog


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
