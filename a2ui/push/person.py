"""What a person sends to the agent, through the session: chat messages, custom actions,
A2UI v0.9 client messages, and the answers among them.

Each is consent-gated (nothing of the person's reaches the agent while a required consent is
missing), recorded where the session keeps it (a chat message in the transcript, numbered
and sent to every client of the session: ``a2ui.push.fanout``), sent to the agent's group
(``a2ui.infra.groups.agent_event``) and audited. No wire format here: each protocol reads its
own frames and calls these.
"""

from a2ui.compliance import audit
from a2ui.core.events import Kind
from a2ui.core.surfaces import PROTOCOL_VERSION
from a2ui.infra import dbthreads, groups, shared
from a2ui.push import admit, fanout
from a2ui.push.answers import aanswer, arespond
from a2ui.requests import pending
from a2ui.sessions.counters import buffer
from a2ui.surfaces import activity
from a2ui.surfaces import routing as surface_routing
from a2ui.surfaces.cleaning import _failed


async def audit_event(token, sid, action, details):
    await audit.arecord(action, actor=token.user, agent=token.agent, session_id=sid,
                        details=details)


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
    await groups.tell_agent(await socket.agent_id(), "user.action", params)
    details = {"action_type": action[:64]}
    if component_id is not None:
        details["component_id"] = component_id[:200]
    await audit_event(socket.token, sid, audit_as, details)


async def text_message(socket, event, *, prefix="event", action="agui.text_message"):
    """A chat message of the person (``event``: ``sender``, ``content``, ``metadata``?):
    recorded in the session's transcript (role user, so every client of the session shows
    it) and sent to the agent as ``user.message``. Also the JSON-RPC socket's ``user.message``
    (``prefix`` names the fields in a refusal, ``action`` is the audit event's)."""
    await socket.check_consent()
    sid = socket.session_id
    record = activity.person_message(event["sender"], event["content"], event.get("metadata"),
                                     prefix)
    await arecord_person_message(sid, record)
    params = {"session_id": str(sid), "user": socket.token.user.get_username(),
              "sender": event["sender"], "content": event["content"]}
    if event.get("metadata"):
        params["metadata"] = event["metadata"]
    await groups.tell_agent(await socket.agent_id(), "user.message", params)
    await audit_event(socket.token, sid, action, {"length": len(event["content"])})


# Chat messages ---------------------------------------------------------------------------------


async def arecord_person_message(session_id, data):
    """Store and emit a person's message (``person_message`` data) in the session's order."""
    data = await dbthreads.run(activity.store, session_id, Kind.MESSAGE, data)
    await fanout.emit(session_id, Kind.MESSAGE, data)
    return data


async def arecord_person_messages(session_id, records):
    """Store and emit several of a person's messages (``person_message`` data each) as one:
    one transaction, one ``message.batch`` event (a lone message is a ``message``)."""
    if len(records) == 1:
        return [await arecord_person_message(session_id, records[0])]
    if not records:
        return []
    data = await dbthreads.run(activity.store, session_id, Kind.MESSAGE_BATCH, {"messages": records})
    await fanout.emit(session_id, Kind.MESSAGE_BATCH, data)
    return data["messages"]


# A2UI v0.9 client messages ----------------------------------------------------------------------


async def aclient_messages(session_id, messages, data_model=None, *, answers=None, via=None):
    """Validate a person's ``action`` / ``error`` messages and send them to the agent.

    The agent's sockets get ``a2ui.v09`` ``{"session_id", "messages", "dataModel"?}``;
    ``dataModel`` (the official client data model form) holds the model of each
    ``sendDataModel`` surface the messages concern: the client's copy when it sent one, else
    the server's. Returns the number of messages delivered.

    ``answers``: the surfaces a protocol made of the session's requests and components (the
    v0.9 socket's: ``a2ui.core.surfaces.translate.ANSWERS``), whose actions are answers, not
    messages for the agent: ``answers.owns(surface_id)``, ``answers.request_id(surface_id)``
    (the request a surface asks, or None) and ``answers.read(action, input_type)`` ->
    ``(what, target, value)``. ``via``: the protocol of the client, for the answers' metrics.
    """
    normalized, client_models, answered = surface_routing.read_client_messages(
        messages, data_model, answers)
    wanted = surface_routing.surface_ids(normalized)
    agent_id, states = await dbthreads.run(surface_routing.client_targets, session_id, wanted)
    models = surface_routing.data_models(normalized, states, client_models)
    if answered or any("action" in m for m in normalized):
        await admit.consent_gate(session_id)  # user data goes to the agent: -32010 if not
    buffer.add(session_id)
    for index, action in answered:
        await _answer(session_id, index, action, answers, via)
    if agent_id and normalized:
        params = {"session_id": str(session_id), "messages": normalized}
        if models:
            params["dataModel"] = {"version": PROTOCOL_VERSION, "surfaces": models}
        await groups.tell_agent(agent_id, "a2ui.v09", params)
    return len(normalized) + len(answered)


async def _answer(session_id, index, action, answers, via=None):
    """A person's action on a translated surface: the answer to an open request or a form
    component's submit (seed 000's ``user.respond``), checked as every answer is
    (``a2ui.requests.pending``: unknown, closed or timed-out requests are refused)."""
    request = None
    request_id = answers.request_id(action["surfaceId"])
    if request_id is not None:
        request = await pending.aopen_request(session_id, request_id)
    input_type = (request.params or {}).get("input_type") if request is not None else None
    what, target, value = answers.read(action, input_type)
    if what == "refused":
        raise _failed(value, "/action/name", target, index)
    if what == "form":
        if not await arespond(session_id, target, value, via=via):
            # A submitted form component goes to the agent as user.respond, keyed by its id
            # (``component_id``, as from every other client).
            await groups.tell_agent(await _agent_of(session_id), "user.respond", {
                "session_id": str(session_id), "request_id": target, "component_id": target,
                "value": value})
        return
    await aanswer(session_id, target, what, value, via=via)


async def _agent_of(session_id):
    cached = await shared.cached_session(session_id.hex)
    if cached is not None:
        return cached[0] or None
    return await dbthreads.run(surface_routing.agent_of, session_id)
