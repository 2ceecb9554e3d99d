"""The data model: what a session shows, what it awaits, who agreed to what, and who did what.

Everything two Daphne processes must agree on lives here (or in Redis), never in a
process-local dict: a reconnecting client, or an answer that arrives at another process, finds
its state in these tables.
"""

from a2ui.models.agents import Agent, StreamToken
from a2ui.models.audit import AuditAnchor, AuditChainHead, AuditEvent, AuditEventQuerySet
from a2ui.models.consent import A2UIConsentRecord
from a2ui.models.requests import PendingRequest
from a2ui.models.runs import AgentRun
from a2ui.models.sessions import (
    THREAD_CONSTRAINT,
    A2UISessionLog,
    PushKey,
    RenderedComponent,
    SessionActivity,
    SessionEvent,
    Surface,
)

__all__ = [
    "THREAD_CONSTRAINT",
    "A2UIConsentRecord",
    "A2UISessionLog",
    "Agent",
    "AgentRun",
    "AuditAnchor",
    "AuditChainHead",
    "AuditEvent",
    "AuditEventQuerySet",
    "PendingRequest",
    "PushKey",
    "RenderedComponent",
    "SessionActivity",
    "SessionEvent",
    "StreamToken",
    "Surface",
]
