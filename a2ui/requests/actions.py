"""What a person's AG-UI events do: USER_ACTION and TEXT_MESSAGE through the services.

The same services the JSON-RPC and MCP person sides use: ``pending.aanswer`` for an open
request, a form component's submission and ``user.cancel`` forwarded to the agent's group, the
consent gate (a missing required consent refuses everything but ``consent`` and ``cancel``),
and an audit event for each event that reaches the agent. No wire format here: the consumer
turns a :class:`~a2ui.core.errors.DomainError` into an ERROR event.

USER_ACTION ``action_type``:

* ``submit`` / ``respond``: ``component_id`` names a form component (its submission goes to
  the agent as ``user.respond``) or an open input request (answered); the value is
  ``payload.value`` when the payload is an object holding one, else the payload;
* ``approve`` / ``reject`` / ``confirm``: answers a confirm request ``component_id``
  (``payload.approved`` for ``confirm``, ``payload.reason`` optional);
* ``cancel``: ``user.cancel`` of the task ``component_id`` to the agent (``payload.reason``);
* ``consent``: ``payload {"consent_type", "granted"}`` records the person's choice;
* anything else: forwarded to the agent as ``user.action`` (:func:`custom_action`, also the
  JSON-RPC socket's ``user.action``).
"""

from a2ui.compliance import audit
from a2ui.consent import choices as consent
from a2ui.core.content import methods
from a2ui.core.errors import DomainError, Fault, invalid_input
from a2ui.infra import groups
from a2ui.requests import pending
from a2ui.surfaces import activity

ANSWERS = ("submit", "respond")
CONFIRMS = ("approve", "reject", "confirm")


async def _to_agent(agent_id, method, params):
    if agent_id:
        await groups.send_group(groups.agent_group(agent_id), groups.agent_event(method, params))


async def _audit(token, sid, action, details):
    await audit.arecord(action, actor=token.user, agent=token.agent, session_id=sid,
                        details=details)


def _request_id(event):
    request_id = event.get("component_id")
    if not isinstance(request_id, str) or not request_id:
        raise DomainError(Fault.INVALID_INPUT, "This action needs a component_id.",
                          {"path": "event.component_id", "reason": "is required"})
    return request_id


async def custom_action(socket, action, component_id=None, payload=None, *,
                        audit_as="agui.user_action"):
    """A person's action with no meaning of its own here (an artifact edit, a button of the
    agent's): consent-gated, sent to the agent as ``user.action`` ``{session_id, action_type,
    component_id?, payload?}`` and audited (``audit_as``, details ``{action_type,
    component_id?}``). ``socket``: a SessionSocket with a session (AG-UI or JSON-RPC)."""
    await socket.check_consent()
    sid = socket.session_id
    params = {"session_id": str(sid), "action_type": action}
    if component_id is not None:
        params["component_id"] = component_id
    if payload is not None:
        params["payload"] = payload
    await _to_agent(await socket.agent_id(), "user.action", params)
    details = {"action_type": action[:64]}
    if component_id is not None:
        details["component_id"] = component_id[:200]
    await _audit(socket.token, sid, audit_as, details)


async def user_action(socket, event):
    """One USER_ACTION of the person on ``socket`` (an AguiConsumer with a session)."""
    sid, action = socket.session_id, event["action_type"]
    payload = event.get("payload")
    if action == "consent":
        if not isinstance(payload, dict):
            raise invalid_input("event.payload", "must be an object")
        consent_type, granted = consent.validate_params(payload)
        change = await consent.arecord_choice(socket.token.user, consent_type, granted, sid)
        await consent.anotify(change)
        socket.consent_changed(consent_type, granted)
        return
    if action not in ANSWERS + CONFIRMS + ("cancel",):  # component_id optional, as the seed's
        await custom_action(socket, action, event.get("component_id"), payload)
        return
    request_id = _request_id(event)
    agent_id = await socket.agent_id()
    if action == "cancel":
        reason = payload.get("reason") if isinstance(payload, dict) else None
        params = methods.validate_params("user.cancel", {
            "task_id": request_id, **({"reason": reason} if reason is not None else {})})
        await _to_agent(agent_id, "user.cancel", {"session_id": str(sid), **params})
    else:
        await socket.check_consent()
        if action in ANSWERS:
            value = payload.get("value", payload) if isinstance(payload, dict) else payload
            params = methods.validate_params("user.respond",
                                             {"request_id": request_id, "value": value})
            if not await pending.arespond(sid, request_id, params["value"], via="agui"):
                await _to_agent(agent_id, "user.respond", {
                    "session_id": str(sid), "request_id": request_id,
                    "component_id": request_id, "value": params["value"]})
        else:  # CONFIRMS
            payload = payload if isinstance(payload, dict) else {}
            approved = payload.get("approved") if action == "confirm" else action == "approve"
            params = methods.validate_params("user.approve", {
                "request_id": request_id, "approved": approved,
                **({"reason": payload["reason"]} if "reason" in payload else {})})
            await pending.aanswer(sid, request_id, "confirm", {
                "approved": params["approved"], "reason": params.get("reason", "")}, via="agui")
    await _audit(socket.token, sid, "agui.user_action",
                 {"action_type": action[:64], "component_id": request_id[:200]})


async def text_message(socket, event, *, prefix="event", action="agui.text_message"):
    """A chat message of the person (``event``: ``sender``, ``content``, ``metadata``?):
    recorded in the session's transcript (role user, so every client of the session shows
    it) and sent to the agent as ``user.message``. Also the JSON-RPC socket's ``user.message``
    (``prefix`` names the fields in a refusal, ``action`` is the audit event's)."""
    await socket.check_consent()
    sid = socket.session_id
    record = activity.person_message(event["sender"], event["content"], event.get("metadata"),
                                     prefix)
    await activity.arecord_person_message(sid, record)
    params = {"session_id": str(sid), "user": socket.token.user.get_username(),
              "sender": event["sender"], "content": event["content"]}
    if event.get("metadata"):
        params["metadata"] = event["metadata"]
    await _to_agent(await socket.agent_id(), "user.message", params)
    await _audit(socket.token, sid, action, {"length": len(event["content"])})
