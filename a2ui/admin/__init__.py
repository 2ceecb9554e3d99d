"""Admin: live sessions at a glance, tokens by state, consents by type, the audit trail.

Thin: operators act through ``a2ui.push.revocation`` (terminate sessions, revoke stream
tokens, agents and consents), and every action is an AuditEvent naming the operator. The four
actions need their own permissions (``a2ui.terminate_a2uisessionlog``, ``a2ui.revoke_streamtoken``,
``a2ui.revoke_agent``, ``a2ui.revoke_a2uiconsentrecord``), which the "a2ui compliance" group
holds (``manage.py a2ui_compliance_group``). AuditEvent is read-only for everyone, superusers
included; sessions, tokens and consents are removed only by retention (``a2ui_purge``).

Registrations by model: ``agents`` (Agent, StreamToken), ``sessions`` (A2UISessionLog,
RenderedComponent, PendingRequest, Surface), ``audit`` (A2UIConsentRecord, AuditEvent); the
filters and actions they share are in ``common``.
"""

# Importing registers the admins (and the index with the compliance tools).
from a2ui.admin import agents, audit, common, sessions, tools  # noqa: F401
