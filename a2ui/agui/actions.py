"""What a person's AG-UI events do (seed 003's USER_ACTION), through the push layer.

USER_ACTION ``action_type``:

* ``submit`` / ``respond``: ``component_id`` names a form component (its submission goes to
  the agent as ``user.respond``) or an open input request (answered); the value is
  ``payload.value`` when the payload is an object holding one, else the payload;
* ``approve`` / ``reject`` / ``confirm``: answers a confirm request ``component_id``
  (``payload.approved`` for ``confirm``, ``payload.reason`` optional);
* ``cancel``: ``user.cancel`` of the task ``component_id`` to the agent (``payload.reason``);
* ``consent``: ``payload {"consent_type", "granted"}`` records the person's choice;
* anything else: forwarded to the agent as ``user.action`` (``a2ui.push.person.custom_action``,
  also the JSON-RPC socket's ``user.action``).

A TEXT_MESSAGE is the person's chat message (``a2ui.push.person.text_message``). The consumer
turns a :class:`~a2ui.core.errors.DomainError` into an ERROR event.
"""

from a2ui.consent import choices as consent
from a2ui.core.content import methods
from a2ui.core.errors import DomainError, Fault, invalid_input
from a2ui.infra import groups
from a2ui.push import answers, person

ANSWERS = ("submit", "respond")
CONFIRMS = ("approve", "reject", "confirm")


def _request_id(event):
    request_id = event.get("component_id")
    if not isinstance(request_id, str) or not request_id:
        raise DomainError(Fault.INVALID_INPUT, "This action needs a component_id.",
                          {"path": "event.component_id", "reason": "is required"})
    return request_id


async def user_action(socket, event):
    """One USER_ACTION of the person on ``socket`` (an AguiConsumer with a session)."""
    sid, action = socket.session_id, event["action_type"]
    payload = event.get("payload")
    if action == "consent":
        if not isinstance(payload, dict):
            raise invalid_input("event.payload", "must be an object")
        consent_type, granted = consent.validate_params(payload)
        await consent.count_choice(socket.token.user_id, socket.scope)
        change = await consent.arecord_choice(socket.token.user, consent_type, granted, sid)
        await consent.anotify(change)
        socket.consent_changed(consent_type, granted)
        return
    if action not in ANSWERS + CONFIRMS + ("cancel",):  # component_id optional, as the seed's
        await person.custom_action(socket, action, event.get("component_id"), payload)
        return
    request_id = _request_id(event)
    agent_id = await socket.agent_id()
    if action == "cancel":
        reason = payload.get("reason") if isinstance(payload, dict) else None
        params = methods.validate_params("user.cancel", {
            "task_id": request_id, **({"reason": reason} if reason is not None else {})})
        await groups.tell_agent(agent_id, "user.cancel", {"session_id": str(sid), **params})
    else:
        await socket.check_consent()
        if action in ANSWERS:
            value = payload.get("value", payload) if isinstance(payload, dict) else payload
            params = methods.validate_params("user.respond",
                                             {"request_id": request_id, "value": value})
            if not await answers.arespond(sid, request_id, params["value"], via="agui"):
                await groups.tell_agent(agent_id, "user.respond", {
                    "session_id": str(sid), "request_id": request_id,
                    "component_id": request_id, "value": params["value"]})
        else:  # CONFIRMS
            payload = payload if isinstance(payload, dict) else {}
            approved = payload.get("approved") if action == "confirm" else action == "approve"
            params = methods.validate_params("user.approve", {
                "request_id": request_id, "approved": approved,
                **({"reason": payload["reason"]} if "reason" in payload else {})})
            await answers.aanswer(sid, request_id, "confirm", {
                "approved": params["approved"], "reason": params.get("reason", "")}, via="agui")
    await person.audit_event(socket.token, sid, "agui.user_action",
                 {"action_type": action[:64], "component_id": request_id[:200]})
