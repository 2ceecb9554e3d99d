"""The app's settings: one namespaced ``A2UI`` dict, read through ``a2ui_settings``.

Modelled on DRF's ``api_settings``: defaults live here, a site overrides only the keys it needs,
attribute access is cached, and the cache is dropped when tests change ``settings.A2UI``.
The defaults are the limits of the A2UI protocol (seed 000, sections 2 and 7).

``DEFAULTS`` holds the core's settings (those the services read). A setting only one protocol
reads has its default in that protocol's adapter (``Adapter.settings_defaults``, e.g. MCP_* in
``a2ui.mcp.adapter``): ``a2ui_settings`` looks a name up there when it is not a core default,
reading the registered adapters (``A2UI['ADAPTERS']``) on first use, never at import.
A site's ``A2UI = {...}`` wins over both. :func:`defaults` is every default, merged.
"""

import os
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.core.signals import setting_changed
from django.utils.translation import gettext_lazy

from a2ui.core.settingtypes import Settings

if TYPE_CHECKING:
    from a2ui.core.adapters import Adapter


def env_int(name: str, default: Any, kind: type = int) -> Any:
    value = os.environ.get(name)
    if value is None or value.strip() == "":
        return default
    try:
        return kind(value)
    except ValueError:
        return value  # left for the system check to report, not a crash at import


def _env_number(name: str, default: Any) -> Any:
    return env_int(name, default, float)


DEFAULTS: dict[str, Any] = {
    # Tokens and sessions (seed 000 section 2 and 7).
    "STREAM_TOKEN_EXPIRE_MINUTES": env_int("STREAM_TOKEN_EXPIRE_MINUTES", 30),
    "MAX_PAYLOAD_SIZE": 1024 * 1024,
    "RATE_LIMIT_PER_MINUTE": 60,
    "MAX_CONCURRENT_SESSIONS_PER_AGENT": 10,
    # A person's share of an agent's sessions in use, percent (rounded up, at least one), and
    # the detached sessions of a person kept (a2ui.sessions.admission).
    "MAX_SESSIONS_PER_PERSON_PERCENT": 50,
    "MAX_DETACHED_SESSIONS_PER_PERSON": 20,
    "SESSION_INACTIVITY_TIMEOUT_SECONDS": 3600,
    "CONFIRM_TIMEOUT_SECONDS": 30,
    "INPUT_TIMEOUT_SECONDS": 300,
    # Which agent a stream token names when the client does not say (Agent.name); None: the
    # only active agent if there is exactly one.
    "DEFAULT_AGENT": os.environ.get("A2UI_DEFAULT_AGENT") or None,
    # Consent types a session needs before the agent may request input or receive user data.
    # A2UI_REQUIRED_CONSENTS in the environment: comma-separated (manage.py a2ui_demo sets it).
    "REQUIRED_CONSENTS": [t.strip() for t in os.environ.get("A2UI_REQUIRED_CONSENTS", "")
                          .split(",") if t.strip()],
    "CONSENT_DESCRIPTIONS": {
        "data_collection": gettext_lazy("The agent may collect the information you enter."),
        "ui_interaction": gettext_lazy(
            "The agent may show you interactive screens and read your answers."),
    },
    # Session metrics are buffered in memory and flushed at this interval (seconds).
    "METRICS_FLUSH_SECONDS": 2.0,
    # Retention for a2ui_purge (days); consents and audit events are kept unless told.
    "RETENTION_DAYS": 90,
    "PURGE_CONSENTS": False,
    "PURGE_AUDIT": False,
    # The audit trail's hash chain (a2ui.compliance.chain, docs/compliance.md): the name of
    # this deployment's chain, and the key that signs checkpoints and purge anchors (bytes or
    # str; None: derived from SECRET_KEY, so rotating SECRET_KEY invalidates old checkpoints).
    "AUDIT_SITE": os.environ.get("A2UI_AUDIT_SITE") or "default",
    "AUDIT_CHECKPOINT_KEY": os.environ.get("A2UI_AUDIT_CHECKPOINT_KEY") or None,
    # Keep each event a person sees (components, requests, v0.9 surfaces, activity, consent
    # prompts) with its session for the admin's replay (docs/compliance.md, "Replay"); the rows
    # go with the session. False: nothing is kept and replay shows no moments.
    "REPLAY_KEEP_EVENTS": True,
    # How often a process writes the events it kept (one statement a batch, off the push path).
    "REPLAY_FLUSH_SECONDS": 0.25,
    # OpenTelemetry traces (the ``otel`` extra; a2ui.infra.tracing, docs/operations.md).
    # False: nothing of OpenTelemetry is imported. A2UI_TRACING=1 in the environment turns it on.
    "TRACING": os.environ.get("A2UI_TRACING", "").strip().lower() in ("1", "true", "yes", "on"),
    # None: spans go to the process's global tracer provider (configured by the site, e.g.
    # ``opentelemetry-instrument``). An import string: a factory returning a SpanExporter, for
    # a tracer provider of the app's own (A2UI_TRACING_EXPORTER in the environment).
    "TRACING_EXPORTER": os.environ.get("A2UI_TRACING_EXPORTER") or None,
    # With TRACING_EXPORTER: export each span when it ends (True) instead of in batches.
    # A2UI_TRACING_SIMPLE_PROCESSOR=1 in the environment sets it.
    "TRACING_SIMPLE_PROCESSOR": os.environ.get("A2UI_TRACING_SIMPLE_PROCESSOR", "").strip()
    .lower() in ("1", "true", "yes", "on"),
    # Redis for what several processes share (sequence numbers, rate limits, the live-session
    # cache). None: process-local fallbacks, correct only with one process (the in-memory layer).
    "REDIS_URL": os.environ.get("REDIS_URL") or None,
    # Several Redis servers (docs/operations.md): each session's state and group on one of
    # these (rendezvous hashing), the rest on REDIS_URL. URLs, or a dict of name to URL;
    # A2UI_REDIS_SHARDS in the environment: URLs separated by whitespace.
    "REDIS_SHARDS": os.environ.get("A2UI_REDIS_SHARDS", "").split(),
    # Prometheus metrics (a2ui.infra.prom, docs/operations.md "Metrics"): on/off (off, the
    # default until their cost on the push path is measured on a quiet machine: no cost;
    # A2UI_PROMETHEUS=1 turns them on), the directory several processes share (None: PROMETHEUS_MULTIPROC_DIR from the
    # environment, else one process alone), and who may scrape /a2ui/metrics: a bearer token
    # and/or networks (CIDR); loopback only when neither is set.
    "PROMETHEUS": os.environ.get("A2UI_PROMETHEUS", "").strip().lower()
    in ("1", "true", "yes", "on"),
    "PROMETHEUS_MULTIPROC_DIR": os.environ.get("A2UI_PROMETHEUS_MULTIPROC_DIR") or None,
    "METRICS_TOKEN": os.environ.get("A2UI_METRICS_TOKEN") or None,
    "METRICS_NETWORKS": ["127.0.0.0/8", "::1/128"],
    # Connections per process and event loop of the redis-py pool (consents and ``unix://``
    # URLs; the per-message commands share one pipelined connection). A burst beyond it waits
    # for a free connection (up to 15 s) instead of failing.
    "REDIS_MAX_CONNECTIONS": env_int("A2UI_REDIS_MAX_CONNECTIONS", 50),
    # Pushes to a session whose sockets are all in the sending process skip the channel layer
    # (a2ui.push.direct); False sends every push through the layer.
    # A2UI_DIRECT_DELIVERY=0 in the environment turns it off too (bench/bench_push.py --direct off).
    "DIRECT_DELIVERY": os.environ.get("A2UI_DIRECT_DELIVERY", "1").strip().lower()
    not in ("0", "false", "no", "off"),
    # True (the default): per-message database work (renders, updates, input requests and
    # answers, the metrics flush: a2ui.infra.dbthreads) commits as PostgreSQL is configured,
    # waiting for the WAL flush, so nothing an agent was told was delivered is lost to a
    # database crash. False commits those transactions with synchronous_commit off: much faster
    # under load (docs/performance.md, soak), but a PostgreSQL crash may lose the last ~0.6 s of
    # such writes (never corrupts). A2UI_PER_MESSAGE_SYNCHRONOUS_COMMIT=0 sets False.
    "PER_MESSAGE_SYNCHRONOUS_COMMIT": os.environ.get(
        "A2UI_PER_MESSAGE_SYNCHRONOUS_COMMIT", "1").strip().lower() not in ("0", "false", "no",
                                                                          "off"),
    # Idempotency keys of agent pushes (a2ui.push.keys): a retry with the same key is
    # answered with the original outcome for this long after the push (and never after its
    # session is gone).
    "IDEMPOTENCY_KEY_TTL_SECONDS": 3600,
    # A session whose sockets all went away may be resumed for this long before it is closed.
    "RESUME_WINDOW_SECONDS": 300,
    # (AGUI_*: a2ui.agui1.adapter; MCP_*: a2ui.mcp.adapter.)
    # A2UI v0.9 catalogs besides the basic one: dotted paths (to a dict, or a callable
    # returning one) or JSON file paths, each a catalog in the basic catalog's shape.
    "CATALOGS": [],
    # The host project's own seed-000 component types: {name: {"schema": <JSON Schema of the
    # component's data>}} (a2ui.core.content.customtypes; the web client draws each with the
    # renderer registered by window.a2ui.registerComponent, docs/client.md).
    "COMPONENT_TYPES": {},
    # A session's activity (a2ui.core.activity: transcript, tool calls, state document, plans,
    # resource tree, roster, artifacts; docs/settings.md). Kept: the newest messages and tool
    # calls; refused: what goes beyond the others.
    "ACTIVITY_TRANSCRIPT_LENGTH": 200,
    "ACTIVITY_MAX_MESSAGE_LENGTH": 16000,
    "ACTIVITY_MAX_TOOL_CALLS": 100,
    "ACTIVITY_MAX_VALUE_SIZE": 64 * 1024,
    "ACTIVITY_MAX_PLANS": 50,
    "ACTIVITY_MAX_ARTIFACTS": 20,
    "ACTIVITY_MAX_ARTIFACT_SIZE": 256 * 1024,
    "ACTIVITY_MAX_STATE_SIZE": 256 * 1024,
    "ACTIVITY_MAX_STATE_DEPTH": 16,
    "ACTIVITY_MAX_TREE_NODES": 2000,
    "ACTIVITY_MAX_ROSTER": 100,
    # The server's edge (manage.py a2ui_serve; a2ui.serving, docs/operations.md "The edge"):
    # deadlines for a request's head and body to arrive and for an idle keep-alive connection,
    # caps on the TCP connections one address (0: none) and the process hold (None: what the
    # descriptor limit allows), the addresses without a per-address cap (trusted reverse
    # proxies: addresses or networks; loopback, where a proxy on the same host connects from),
    # and one WARNING line per address and this interval.
    "EDGE_HEADER_TIMEOUT_SECONDS": 10,
    "EDGE_BODY_TIMEOUT_SECONDS": 30,
    "EDGE_KEEPALIVE_TIMEOUT_SECONDS": 30,
    "EDGE_MAX_CONNECTIONS_PER_ADDRESS": 256,
    "EDGE_MAX_CONNECTIONS": None,
    "EDGE_TRUSTED_PROXIES": ["127.0.0.1", "::1"],
    "EDGE_LOG_INTERVAL_SECONDS": 60,
    # Caps on long-lived things (a2ui.infra.caps; docs/operations.md "Caps"): how many of
    # each kind one credential, and one client address, may hold open at once, across every
    # process (leases in Redis that expire CAP_LEASE_SECONDS after their process stops
    # refreshing them). A refusal is HTTP 429 with a JSON body, or the socket protocol's
    # rate-limit error and close code (4001). A2UI_<key> in the environment sets each cap.
    # Per credential: a person's (stream token's user, per agent) stream_mcp sessions; an
    # agent key's MCP sessions; a person's session sockets (/ws/v4/a2ui, /ws/v09/a2ui,
    # /ws/agui together); an agent key's agent sockets; a person's v0.9 SSE streams; a
    # person's AG-UI 1.0 runs in flight. Per address: of each kind, from one client address.
    "CAP_MCP_SESSIONS_PER_PERSON": env_int("A2UI_CAP_MCP_SESSIONS_PER_PERSON", 20),
    "CAP_MCP_SESSIONS_PER_AGENT_KEY": env_int("A2UI_CAP_MCP_SESSIONS_PER_AGENT_KEY", 200),
    "CAP_SOCKETS_PER_PERSON": env_int("A2UI_CAP_SOCKETS_PER_PERSON", 50),
    "CAP_AGENT_SOCKETS_PER_AGENT_KEY": env_int("A2UI_CAP_AGENT_SOCKETS_PER_AGENT_KEY", 50),
    "CAP_STREAMS_PER_PERSON": env_int("A2UI_CAP_STREAMS_PER_PERSON", 50),
    "CAP_RUNS_PER_PERSON": env_int("A2UI_CAP_RUNS_PER_PERSON", 20),
    "CAP_PER_ADDRESS": env_int("A2UI_CAP_PER_ADDRESS", 1000),
    "CAP_LEASE_SECONDS": env_int("A2UI_CAP_LEASE_SECONDS", 60),
    # Sign-ins (a2ui.web.logins; docs/operations.md "Sign-in limits"): failures that lock an
    # account or an address, within a window; how long; password checks at once per process,
    # and the wait for one (then 503).
    "LOGIN_FAILURES_PER_ACCOUNT": env_int("A2UI_LOGIN_FAILURES_PER_ACCOUNT", 10),
    "LOGIN_FAILURES_PER_ADDRESS": env_int("A2UI_LOGIN_FAILURES_PER_ADDRESS", 50),
    "LOGIN_FAILURE_WINDOW_SECONDS": 900, "LOGIN_LOCKOUT_SECONDS": 900,
    "LOGIN_CONCURRENT_CHECKS": env_int("A2UI_LOGIN_CONCURRENT_CHECKS", 2),
    "LOGIN_CHECK_WAIT_SECONDS": 5,
    # Rates (a2ui.infra.caps.check_rate): stream tokens minted, consent choices made and
    # exports of a person's data, per credential and a minute; of each, per client address.
    "RATE_STREAM_TOKENS_PER_MINUTE": env_int("A2UI_RATE_STREAM_TOKENS_PER_MINUTE", 60),
    "RATE_CONSENTS_PER_MINUTE": env_int("A2UI_RATE_CONSENTS_PER_MINUTE", 60),
    "RATE_EXPORTS_PER_MINUTE": env_int("A2UI_RATE_EXPORTS_PER_MINUTE", 10),
    "RATE_PER_ADDRESS_PER_MINUTE": env_int("A2UI_RATE_PER_ADDRESS_PER_MINUTE", 600),
    # Remote agents (a2ui.remote, docs/remote-agents.md). Outbound requests go only to these
    # hosts (``host`` or ``host:port``; A2UI_REMOTE_AGENT_HOSTS in the environment, comma-
    # separated); a host that resolves to a loopback, private, link-local or otherwise special
    # address is refused unless it is listed by that address (or by a name that resolves to it).
    "REMOTE_AGENT_HOSTS": [h.strip() for h in os.environ.get("A2UI_REMOTE_AGENT_HOSTS", "")
                           .split(",") if h.strip()],
    # Time limits of an upstream run: to connect (and TLS), between two events of its stream,
    # and the whole run; size caps on one event and on a whole run's stream (bytes), and on its
    # number of events.
    "REMOTE_AGENT_CONNECT_TIMEOUT_SECONDS": env_int("A2UI_REMOTE_AGENT_CONNECT_TIMEOUT_SECONDS", 10),
    "REMOTE_AGENT_IDLE_TIMEOUT_SECONDS": env_int("A2UI_REMOTE_AGENT_IDLE_TIMEOUT_SECONDS", 120),
    "REMOTE_AGENT_RUN_TIMEOUT_SECONDS": env_int("A2UI_REMOTE_AGENT_RUN_TIMEOUT_SECONDS", 900),
    "REMOTE_AGENT_MAX_EVENT_BYTES": 1024 * 1024,
    "REMOTE_AGENT_MAX_RUN_BYTES": 16 * 1024 * 1024,
    "REMOTE_AGENT_MAX_RUN_EVENTS": 100_000,
    # Caps: runs in flight per remote agent (RemoteAgent.max_concurrent_runs overrides it) and
    # per person and agent, across processes; a person's messages waiting behind a running run
    # of their session (more are refused with a message).
    "REMOTE_AGENT_MAX_RUNS": env_int("A2UI_REMOTE_AGENT_MAX_RUNS", 50),
    "REMOTE_AGENT_MAX_RUNS_PER_PERSON": env_int("A2UI_REMOTE_AGENT_MAX_RUNS_PER_PERSON", 3),
    "REMOTE_AGENT_MAX_QUEUED": 3,
    # The lease a remote run holds while a process runs it (a2ui.infra.leases), refreshed every
    # third of it: a run whose lease lapsed lost its process (the person is told, A2A resumes).
    "REMOTE_AGENT_LEASE_SECONDS": env_int("A2UI_REMOTE_AGENT_LEASE_SECONDS", 6),
    # Streamed text is shown as it comes, one update of the chat message at most this often
    # (milliseconds; longer messages a little less often).
    "REMOTE_AGENT_TEXT_FLUSH_MS": 75,
    # Show an agent's reasoning text (AG-UI REASONING_*) to the person, marked as reasoning.
    "REMOTE_AGENT_SHOW_REASONING": False,
    # In-process agents: name -> import string of an AG-UI ASGI app (pydantic-ai's AGUIApp, a
    # FastAPI app of ag-ui-langgraph or ag-ui-adk...) or of an async run function
    # (RunAgentInput -> async iterator of AG-UI events). Each is an agent of that name (its row
    # is created or updated when the server starts, or by ``a2ui_agent sync``).
    "AGENTS": {},
    # Health probes (a2ui.infra.health; docs/operations.md "Health and readiness probes"):
    # a readiness result is reused for this long per process, and each of its checks (the
    # database, Redis, the channel layer) fails after this long without an answer.
    "HEALTH_CACHE_SECONDS": 1.0,
    "HEALTH_CHECK_TIMEOUT_SECONDS": 0.5,
    # Whether an agent socket's agent answers (a2ui.jsonrpc.liveness): the server sends each
    # agent socket an ``a2ui.ping`` request this often (seconds; 0: never), and a socket that
    # answered none for AGENT_PING_TIMEOUT_SECONDS no longer counts as its agent being there
    # (its people see it offline) until it answers again. Frozen agents show within the sum.
    "AGENT_PING_SECONDS": _env_number("A2UI_AGENT_PING_SECONDS", 4),
    "AGENT_PING_TIMEOUT_SECONDS": _env_number("A2UI_AGENT_PING_TIMEOUT_SECONDS", 8),
    # Web client.
    "SERVE_STATIC": True,
    # The page's title (the app's own client and login pages; None: "Assistant", translated).
    "SITE_TITLE": None,
    # Apps whose djangojs catalogs the client's page embeds besides the app's own (the strings
    # of a host project's own components; a2ui.web.i18n).
    "CLIENT_I18N_PACKAGES": [],
    # ES modules (static paths) the client page loads before the client starts: a host
    # project's component renderers (docs/client.md, "Your own components").
    "CLIENT_MODULES": [],
    # The protocols served: modules exposing an ADAPTER (a2ui.core.adapters). One line each.
    "ADAPTERS": [
        "a2ui.jsonrpc.adapter",
        "a2ui.v09.adapter",
        "a2ui.mcp.adapter",
        "a2ui.agui.adapter",
        "a2ui.agui1.adapter",
        "a2ui.remote.adapter",  # remote agents: no clients of its own (docs/remote-agents.md)
    ],
}

# Settings that must be positive integers, checked at start-up by a2ui.checks (and every
# adapter setting whose default is an integer: ``positive_ints``).
POSITIVE_INTS = (
    "STREAM_TOKEN_EXPIRE_MINUTES",
    "MAX_PAYLOAD_SIZE",
    "RATE_LIMIT_PER_MINUTE",
    "MAX_CONCURRENT_SESSIONS_PER_AGENT",
    "MAX_SESSIONS_PER_PERSON_PERCENT",
    "MAX_DETACHED_SESSIONS_PER_PERSON",
    "SESSION_INACTIVITY_TIMEOUT_SECONDS",
    "CONFIRM_TIMEOUT_SECONDS",
    "INPUT_TIMEOUT_SECONDS",
    "RETENTION_DAYS",
    "RESUME_WINDOW_SECONDS",
    "IDEMPOTENCY_KEY_TTL_SECONDS",
    "REDIS_MAX_CONNECTIONS",
    "ACTIVITY_TRANSCRIPT_LENGTH",
    "ACTIVITY_MAX_MESSAGE_LENGTH",
    "ACTIVITY_MAX_TOOL_CALLS",
    "ACTIVITY_MAX_VALUE_SIZE",
    "ACTIVITY_MAX_PLANS",
    "ACTIVITY_MAX_ARTIFACTS",
    "ACTIVITY_MAX_ARTIFACT_SIZE",
    "ACTIVITY_MAX_STATE_SIZE",
    "ACTIVITY_MAX_STATE_DEPTH",
    "ACTIVITY_MAX_TREE_NODES",
    "ACTIVITY_MAX_ROSTER",
    "EDGE_HEADER_TIMEOUT_SECONDS",
    "EDGE_BODY_TIMEOUT_SECONDS",
    "EDGE_KEEPALIVE_TIMEOUT_SECONDS",
    "EDGE_LOG_INTERVAL_SECONDS",
    "CAP_MCP_SESSIONS_PER_PERSON",
    "CAP_MCP_SESSIONS_PER_AGENT_KEY",
    "CAP_SOCKETS_PER_PERSON",
    "CAP_AGENT_SOCKETS_PER_AGENT_KEY",
    "CAP_STREAMS_PER_PERSON",
    "CAP_RUNS_PER_PERSON",
    "CAP_PER_ADDRESS",
    "CAP_LEASE_SECONDS",
    *(name for name in DEFAULTS if name.startswith(("LOGIN_", "RATE_"))
      and name != "RATE_LIMIT_PER_MINUTE"),
    "REMOTE_AGENT_CONNECT_TIMEOUT_SECONDS",
    "REMOTE_AGENT_IDLE_TIMEOUT_SECONDS",
    "REMOTE_AGENT_RUN_TIMEOUT_SECONDS",
    "REMOTE_AGENT_MAX_EVENT_BYTES",
    "REMOTE_AGENT_MAX_RUN_BYTES",
    "REMOTE_AGENT_MAX_RUN_EVENTS",
    "REMOTE_AGENT_MAX_RUNS",
    "REMOTE_AGENT_MAX_RUNS_PER_PERSON",
    "REMOTE_AGENT_MAX_QUEUED",
    "REMOTE_AGENT_TEXT_FLUSH_MS",
)

_MISSING = object()


def adapter_defaults() -> dict[str, Any]:
    """The registered adapters' ``settings_defaults``, merged in ``A2UI['ADAPTERS']`` order
    (imported on first use: ``a2ui.core.adapters.registered``)."""
    merged: dict[str, Any] = {}
    for adapter in registered_adapters():
        for name, value in adapter.settings_defaults.items():
            merged.setdefault(name, value)
    return merged


def defaults() -> dict[str, Any]:
    """Every setting's default: the core's (``DEFAULTS``) and the registered adapters'."""
    return {**adapter_defaults(), **DEFAULTS}


def positive_ints() -> tuple[str, ...]:
    """The settings a2ui.checks requires to be positive integers: ``POSITIVE_INTS`` and every
    adapter setting whose default is an integer."""
    return (*POSITIVE_INTS, *(name for name, value in adapter_defaults().items()
                              if name not in DEFAULTS and isinstance(value, int)
                              and not isinstance(value, bool)))


class A2UISettings(Settings):
    """Attribute access to ``settings.A2UI`` over DEFAULTS; unknown names are an error (types:
    ``a2ui.core.settingtypes``, annotations alone: each name still comes through __getattr__)."""

    def __init__(self, defaults: dict[str, Any] | None = None) -> None:
        self.defaults = defaults or DEFAULTS
        self._cached: set[str] = set()

    @property
    def user_settings(self) -> dict[str, Any]:
        if not hasattr(self, "_user_settings"):
            self._user_settings: dict[str, Any] = getattr(settings, "A2UI", {}) or {}
        return self._user_settings

    if not TYPE_CHECKING:  # a type checker sees the declared names alone: a typo is an error

        def __getattr__(self, name):
            default = self.defaults.get(name, _MISSING)
            if default is _MISSING and name.isupper() and name != "ADAPTERS":
                # A protocol's own setting: its adapter's default (read lazily, not at import).
                default = adapter_defaults().get(name, _MISSING)
            if default is _MISSING:
                raise AttributeError(f"Invalid A2UI setting: {name!r}")
            value = self.user_settings.get(name, default)
            self._cached.add(name)
            setattr(self, name, value)
            return value

    def reload(self) -> None:
        for name in self._cached:
            delattr(self, name)
        self._cached.clear()
        if hasattr(self, "_user_settings"):
            delattr(self, "_user_settings")


a2ui_settings = A2UISettings()


def registered_adapters() -> "tuple[Adapter, ...]":
    """The adapters of ``A2UI['ADAPTERS']`` (``a2ui.core.adapters.registered``), the registry
    told where its list is first (the core imports no settings; importing this module imports
    no adapter)."""
    from a2ui.core import adapters

    adapters.use_source(lambda: a2ui_settings.ADAPTERS)
    return adapters.registered()


def _reload(*, setting: str, **kwargs: Any) -> None:
    if setting == "A2UI":
        a2ui_settings.reload()


setting_changed.connect(_reload)
