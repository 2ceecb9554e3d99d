"""The types of the A2UI settings, as ``a2ui.conf.a2ui_settings`` returns them.

:class:`Settings` declares every setting, the core's (``a2ui.conf.DEFAULTS``) and the in-tree
protocols' (each adapter's ``settings_defaults``), with the type of its value: a type checker
sees ``a2ui_settings.CONFIRM_TIMEOUT_SECONDS`` as an ``int`` and a misspelt name as an error.
``A2UISettings`` inherits these annotations alone (no values): at run time every name is
still looked up in the site's ``A2UI`` dict over the defaults. ``tests/typed`` checks that
each default is declared here with a type its value has.

Typing alone: imports nothing of Django or the app.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any


class Settings:
    """The A2UI settings and their types (docs/settings.md says what each does)."""

    # Tokens and sessions.
    STREAM_TOKEN_EXPIRE_MINUTES: int
    MAX_PAYLOAD_SIZE: int
    RATE_LIMIT_PER_MINUTE: int
    MAX_CONCURRENT_SESSIONS_PER_AGENT: int
    MAX_SESSIONS_PER_PERSON_PERCENT: int
    MAX_DETACHED_SESSIONS_PER_PERSON: int
    SESSION_INACTIVITY_TIMEOUT_SECONDS: int
    CONFIRM_TIMEOUT_SECONDS: int
    INPUT_TIMEOUT_SECONDS: int
    DEFAULT_AGENT: str | None
    REQUIRED_CONSENTS: Sequence[str]
    CONSENT_DESCRIPTIONS: Mapping[str, str]
    METRICS_FLUSH_SECONDS: float
    # Retention and the audit trail.
    RETENTION_DAYS: int
    PURGE_CONSENTS: bool
    PURGE_AUDIT: bool
    AUDIT_SITE: str
    AUDIT_CHECKPOINT_KEY: str | bytes | None
    REPLAY_KEEP_EVENTS: bool
    REPLAY_FLUSH_SECONDS: float
    # Tracing, Redis, metrics, delivery.
    TRACING: bool
    TRACING_EXPORTER: str | None
    TRACING_SIMPLE_PROCESSOR: bool
    REDIS_URL: str | None
    REDIS_SHARDS: Sequence[str] | Mapping[str, str]
    PROMETHEUS: bool
    PROMETHEUS_MULTIPROC_DIR: str | None
    METRICS_TOKEN: str | None
    METRICS_NETWORKS: Sequence[str]
    REDIS_MAX_CONNECTIONS: int
    DIRECT_DELIVERY: bool
    PER_MESSAGE_SYNCHRONOUS_COMMIT: bool
    IDEMPOTENCY_KEY_TTL_SECONDS: int
    RESUME_WINDOW_SECONDS: int
    # Content.
    CATALOGS: Sequence[str]
    COMPONENT_TYPES: Mapping[str, Mapping[str, Any]]
    ACTIVITY_TRANSCRIPT_LENGTH: int
    ACTIVITY_MAX_MESSAGE_LENGTH: int
    ACTIVITY_MAX_TOOL_CALLS: int
    ACTIVITY_MAX_VALUE_SIZE: int
    ACTIVITY_MAX_PLANS: int
    ACTIVITY_MAX_ARTIFACTS: int
    ACTIVITY_MAX_ARTIFACT_SIZE: int
    ACTIVITY_MAX_STATE_SIZE: int
    ACTIVITY_MAX_STATE_DEPTH: int
    ACTIVITY_MAX_TREE_NODES: int
    ACTIVITY_MAX_ROSTER: int
    # The edge and the caps.
    EDGE_HEADER_TIMEOUT_SECONDS: int
    EDGE_BODY_TIMEOUT_SECONDS: int
    EDGE_KEEPALIVE_TIMEOUT_SECONDS: int
    EDGE_MAX_CONNECTIONS_PER_ADDRESS: int
    EDGE_MAX_CONNECTIONS: int | None
    EDGE_TRUSTED_PROXIES: Sequence[str]
    EDGE_LOG_INTERVAL_SECONDS: int
    CAP_MCP_SESSIONS_PER_PERSON: int
    CAP_MCP_SESSIONS_PER_AGENT_KEY: int
    CAP_SOCKETS_PER_PERSON: int
    CAP_AGENT_SOCKETS_PER_AGENT_KEY: int
    CAP_STREAMS_PER_PERSON: int
    CAP_RUNS_PER_PERSON: int
    CAP_PER_ADDRESS: int
    CAP_LEASE_SECONDS: int
    # Sign-ins (a2ui.web.logins) and rates (a2ui.infra.caps.check_rate).
    LOGIN_FAILURES_PER_ACCOUNT: int
    LOGIN_FAILURES_PER_ADDRESS: int
    LOGIN_FAILURE_WINDOW_SECONDS: int
    LOGIN_LOCKOUT_SECONDS: int
    LOGIN_CONCURRENT_CHECKS: int
    LOGIN_CHECK_WAIT_SECONDS: int
    RATE_STREAM_TOKENS_PER_MINUTE: int
    RATE_CONSENTS_PER_MINUTE: int
    RATE_EXPORTS_PER_MINUTE: int
    RATE_PER_ADDRESS_PER_MINUTE: int
    # Remote and in-process agents.
    REMOTE_AGENT_HOSTS: Sequence[str]
    REMOTE_AGENT_CONNECT_TIMEOUT_SECONDS: int
    REMOTE_AGENT_IDLE_TIMEOUT_SECONDS: int
    REMOTE_AGENT_RUN_TIMEOUT_SECONDS: int
    REMOTE_AGENT_MAX_EVENT_BYTES: int
    REMOTE_AGENT_MAX_RUN_BYTES: int
    REMOTE_AGENT_MAX_RUN_EVENTS: int
    REMOTE_AGENT_MAX_RUNS: int
    REMOTE_AGENT_MAX_RUNS_PER_PERSON: int
    REMOTE_AGENT_MAX_QUEUED: int
    REMOTE_AGENT_LEASE_SECONDS: int
    REMOTE_AGENT_TEXT_FLUSH_MS: int
    REMOTE_AGENT_SHOW_REASONING: bool
    AGENTS: Mapping[str, str | Mapping[str, Any]]
    # Probes and liveness.
    HEALTH_CACHE_SECONDS: float
    HEALTH_CHECK_TIMEOUT_SECONDS: float
    AGENT_PING_SECONDS: float
    AGENT_PING_TIMEOUT_SECONDS: float
    # The web client.
    SERVE_STATIC: bool
    SITE_TITLE: str | None
    CLIENT_I18N_PACKAGES: Sequence[str]
    CLIENT_MODULES: Sequence[str]
    # The protocols served.
    ADAPTERS: Sequence[str]
    # MCP (a2ui.mcp.adapter).
    MCP_SESSION_IDLE_SECONDS: int
    MCP_MAX_SESSIONS_PER_PROCESS: int
    MCP_APP_REFRESH_SECONDS: int
    MCP_CONFORMANCE_FIXTURES: bool
    # AG-UI 1.0 (a2ui.agui1.adapter).
    AGUI_MAX_NEW_MESSAGES: int
    AGUI_RESUME_SECONDS: int
    AGUI_RUN_TIMEOUT_SECONDS: int
    AGUI_KEEPALIVE_SECONDS: int
    AGUI_RUN_LEASE_SECONDS: int
