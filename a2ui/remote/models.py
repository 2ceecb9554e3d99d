"""What a remote agent is (its transport) and its runs, in the database every process shares.

Imported by ``a2ui.models`` (the app's models module), so the app label is ``a2ui``.
"""

from django.db import models
from django.utils import timezone


class RemoteAgent(models.Model):
    """How to reach an agent that runs elsewhere (or in this process): an ``a2ui.models.Agent``
    with a transport, so sessions, caps, consent, audit and presence work as for any agent.

    Header values (API keys, bearer tokens) are stored once, encrypted with a key derived from
    SECRET_KEY (``a2ui.remote.secrets``), never shown again: the admin and every listing show
    their names only."""

    KIND_AGUI = "agui"
    KIND_A2A = "a2a"
    KINDS = [(KIND_AGUI, "AG-UI 1.0 endpoint"), (KIND_A2A, "A2A server (A2UI extension)")]

    agent = models.OneToOneField("a2ui.Agent", on_delete=models.CASCADE, primary_key=True,
                                 related_name="remote")
    kind = models.CharField(max_length=16, choices=KINDS, default=KIND_AGUI)
    url = models.CharField(
        max_length=2000, blank=True,
        help_text="The agent's endpoint (AG-UI: where RunAgentInput is POSTed; A2A: the "
                  "agent's base URL or its card's URL). Empty for an in-process agent.")
    in_process = models.CharField(
        max_length=300, blank=True,
        help_text="For an agent of A2UI['AGENTS'] (run in the server's own process): the "
                  "import string it was registered from.")
    sealed_headers = models.TextField(blank=True, default="", editable=False)
    header_names = models.JSONField(default=list, blank=True, editable=False)
    config = models.JSONField(
        default=dict, blank=True, editable=False,
        help_text="What registration found (an A2A agent card...).")
    max_concurrent_runs = models.PositiveIntegerField(
        null=True, blank=True,
        help_text="Empty: A2UI['REMOTE_AGENT_MAX_RUNS'].")
    created_at = models.DateTimeField(default=timezone.now, editable=False)
    updated_at = models.DateTimeField(default=timezone.now, editable=False)

    class Meta:
        app_label = "a2ui"
        verbose_name = "remote agent transport"

    def __str__(self):
        return f"{self.get_kind_display()} {self.url or self.in_process}"


class RemoteRun(models.Model):
    """One run of a remote agent for a session (one upstream request and its stream), or a
    person's turn queued behind the running one.

    At most one runs per session at a time (a partial unique index): whoever claims the next
    queued turn does so by one UPDATE to ``running``, which only one process can win. The
    running process holds the run's lease (``a2ui.remote.leases``); a running row whose lease
    lapsed lost its process, and any process's sweep ends it as ``interrupted``."""

    class Status(models.TextChoices):
        QUEUED = "queued"
        RUNNING = "running"
        WAITING = "waiting"  # it asked the person something: the answer starts the next run
        FINISHED = "finished"
        ERROR = "error"
        INTERRUPTED = "interrupted"
        CANCELLED = "cancelled"
        MERGED = "merged"  # a queued message taken by the run before it

    session = models.ForeignKey("a2ui.A2UISessionLog", on_delete=models.CASCADE,
                                related_name="remote_runs")
    agent = models.ForeignKey("a2ui.Agent", null=True, on_delete=models.SET_NULL,
                              related_name="+")
    run_id = models.CharField(max_length=64)
    status = models.CharField(max_length=12, choices=Status.choices, default=Status.QUEUED,
                              db_index=True)
    #: The person's turn that starts the run (``a2ui.remote.turns``: JSON).
    turn = models.JSONField(default=dict, blank=True)
    #: The ids the client keeps for the thread (``ops.RunIds``), as of this run's end.
    ids = models.JSONField(default=dict, blank=True)
    #: The questions the run asked: request_id -> what the client needs when answered.
    asks = models.JSONField(default=dict, blank=True)
    holder = models.CharField(max_length=100, blank=True,
                              help_text="The process running it (its control channel).")
    outcome = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    started_at = models.DateTimeField(null=True, blank=True)
    ended_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        app_label = "a2ui"
        ordering = ["created_at", "id"]
        constraints = [
            models.UniqueConstraint(fields=["session", "run_id"], name="a2ui_remote_run_uniq"),
            models.UniqueConstraint(fields=["session"], condition=models.Q(status="running"),
                                    name="a2ui_remote_one_running"),
        ]
        indexes = [models.Index(fields=["session", "status"])]

    def __str__(self):
        return f"remote run {self.run_id} ({self.status})"
