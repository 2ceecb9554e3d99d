"""A session's story for the admin: opened, messages, consents, requests and answers, closed.

Built from what the database already holds (the session row and its counters, its audit events,
consent records and pending requests), so nothing extra is written on the message path.
Answers are shown abridged: compliance staff see that and when a person answered, and the
beginning of what they answered.
"""

import json
from collections import Counter
from dataclasses import dataclass, field

from a2ui.models import A2UIConsentRecord, AuditEvent, PendingRequest, RenderedComponent

PREVIEW_CHARS = 120

# Audit actions the timeline tells in its own words; others appear by their action name.
_SKIP_ACTIONS = {"session.open"}  # the "opened" entry says it, with more detail


@dataclass
class Entry:
    at: object
    kind: str  # opened, resumed, consent, request, answer, closed, event, summary
    title: str
    detail: str = ""
    actor: str = ""
    extra: dict = field(default_factory=dict)


def _preview(value):
    if value is None:
        return ""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return text if len(text) <= PREVIEW_CHARS else text[: PREVIEW_CHARS - 1] + "\u2026"


def _request_title(req):
    params = req.params or {}
    if req.kind == PendingRequest.KIND_CONFIRM:
        return f"Confirmation asked: {params.get('title', '')}".strip()
    return f"Input asked ({params.get('input_type', 'text')}): {params.get('prompt', '')}".strip()


def build(session):
    """The session's timeline entries, oldest first, and a messages summary dict."""
    person = session.user.get_username() if session.user else ""
    entries = [
        Entry(
            session.created_at, "opened", "Session opened",
            detail=", ".join(
                f"{k}: {v}" for k, v in (session.client_info or {}).items()
                if isinstance(v, str | int | float)
            ),
            actor=person,
        )
    ]
    for ev in AuditEvent.objects.filter(session_id=session.session_id).order_by("at", "id"):
        if ev.action in _SKIP_ACTIONS or ev.action.startswith("consent."):
            continue
        if ev.action in ("session.terminate", "session.closed", "session.timed_out",
                         "session.rejected"):
            continue  # the "closed" entry below tells it
        kind = "resumed" if ev.action == "session.resume" else "event"
        title = "Session resumed" if kind == "resumed" else ev.action
        entries.append(Entry(ev.at, kind, title, detail=_preview(ev.details or ""),
                             actor=ev.actor_label))
    for rec in A2UIConsentRecord.objects.filter(session=session).select_related("user",
                                                                                 "revoked_by"):
        verb = "granted" if rec.granted else "refused"
        entries.append(Entry(rec.granted_at, "consent", f"Consent {verb}: {rec.consent_type}",
                             actor=rec.user.get_username() if rec.user else "",
                             extra={"consent_type": rec.consent_type}))
        if rec.revoked_at:
            by = rec.revoked_by.get_username() if rec.revoked_by else ""
            entries.append(Entry(rec.revoked_at, "consent",
                                 f"Consent revoked: {rec.consent_type}", actor=by,
                                 extra={"revoked": True}))
    for req in PendingRequest.objects.filter(session=session).order_by("created_at"):
        entries.append(Entry(req.created_at, "request", _request_title(req),
                             detail=f"request_id {req.request_id}", actor="agent"))
        if req.resolved_at:
            if req.status == PendingRequest.Status.ANSWERED:
                # The person of the session answered (the only one who can, on its socket).
                title, detail, actor = "Answered", _preview(req.answer), person
            else:
                title, detail, actor = f"Request {req.status.replace('_', ' ')}", "", ""
            entries.append(Entry(req.resolved_at, "answer", f"{title} ({req.request_id})",
                                 detail=detail, actor=actor,
                                 extra={"request_id": req.request_id}))
    if session.closed_at:
        closer = (
            AuditEvent.objects.filter(
                session_id=session.session_id,
                action__in=["session.terminate", f"session.{session.state}"],
            )
            .order_by("-at")
            .values_list("actor_label", flat=True)
            .first()
        )
        entries.append(Entry(session.closed_at, "closed",
                             f"Session {session.state.replace('_', ' ')}",
                             detail=session.close_reason, actor=closer or ""))
    entries.sort(key=lambda e: e.at)
    components = Counter(
        RenderedComponent.objects.filter(session=session).values_list("component_type",
                                                                     flat=True)
    )
    summary = {
        "messages": session.message_count,
        "components_rendered": session.components_rendered,
        "inputs_requested": session.inputs_requested,
        "components_shown_now": dict(sorted(components.items())),
        "last_activity": session.last_activity,
    }
    return entries, summary
