"""POST /api/v4/agui/run: one AG-UI 1.0 run over HTTP + SSE (docs/protocol-agui.md).

A plain async Django view (like the v0.9 SSE stream): the person's credential (a ``stream_agui``
bearer token, or the session cookie with its CSRF token), the ``RunAgentInput`` body
(``a2ui.agui1.inputs``), the thread's session (``a2ui.agui1.threads``) and the run's row
(``a2ui.runs.records``) are all checked before the stream starts, so every refusal is an HTTP
4xx with a JSON body. The stream itself is ``a2ui.agui1.stream``. A request with
``Last-Event-ID`` is a client back at a run whose stream broke off (``a2ui.agui1.resume``).
"""

from channels.db import database_sync_to_async
from django.http import JsonResponse
from django.middleware.csrf import CsrfViewMiddleware
from django.views.decorators.csrf import csrf_exempt

from a2ui import handoff, tokens
from a2ui.agui1 import TOKEN_TYPE, frames, inputs, interrupts, resume, runleases, stream, threads
from a2ui.agui1 import runs as agui_runs
from a2ui.api.base import json_body_view, limited_body
from a2ui.compliance import audit
from a2ui.conf import a2ui_settings
from a2ui.consent import choices as consent
from a2ui.core.errors import DomainError, Fault
from a2ui.infra import caps, prom, shared
from a2ui.push import person
from a2ui.requests import pending
from a2ui.runs import records as runs
from a2ui.surfaces import activity

STATUS = {
    Fault.SESSION_NOT_FOUND: 404, Fault.SESSION_EXPIRED: 410, Fault.MAX_SESSIONS: 429,
    Fault.CONSENT_REQUIRED: 403, Fault.RATE_LIMITED: 429, Fault.AUTH_FAILED: 401,
    Fault.PAYLOAD_TOO_LARGE: 413, Fault.REQUEST_TIMEOUT: 410, Fault.INVALID_REQUEST: 409,
}


def _refuse(status, message, **extra):
    error = {"code": extra.pop("code", "refused"), "message": message, **extra}
    if prom.ON:
        prom.refused("agui1", error["code"])
    return JsonResponse({"error": error}, status=status)


def _input_refused(exc):
    """An ``inputs.InputError`` answered (counted in the metrics by its code)."""
    body = exc.body()
    if prom.ON:
        prom.refused("agui1", body["error"]["code"])
    return JsonResponse(body, status=exc.status)


def _domain(exc):
    data = exc.data if isinstance(exc.data, dict) else {}
    extra = {"field": data["path"]} if isinstance(data.get("path"), str) else {}
    if data.get("reason"):
        extra["reason"] = str(data["reason"])
    if exc.fault == Fault.MAX_SESSIONS:  # which limit: the agent's, or the person's share
        extra.update(limit=data.get("limit"), per=data.get("per"))
    if data.get("consent_types"):
        extra["consent_types"] = consent.describe(data["consent_types"])
    message = exc.message or str(exc.fault).replace("_", " ").capitalize() + "."
    return _refuse(STATUS.get(exc.fault, 400), message, code=str(exc.fault), **extra)


def _bearer(request):
    scheme, _, value = request.headers.get("Authorization", "").partition(" ")
    return value.strip() if scheme.lower() == "bearer" and value.strip() else None


def _verify(raw):
    kind = tokens.peek_any_stream_token(raw)
    if kind is not None and kind != TOKEN_TYPE:
        raise tokens.TokenError(f"A {kind} token is not valid here: use a stream_agui token.")
    return tokens.verify_stream_token(raw, TOKEN_TYPE)


def _cookie_agent(agent_name):
    """The agent a signed-in person's run is for (named, or the default one)."""
    from a2ui.sessions.agents import find_agent

    agent = find_agent(agent_name) if agent_name else tokens.default_agent()
    if agent is None:
        raise DomainError(Fault.INVALID_INPUT, "Unknown or inactive agent." if agent_name else
                          "No default agent: name one in forwardedProps.a2ui.agent.",
                          {"path": "forwardedProps.a2ui.agent"})
    return agent


def _cookie_token(user, agent):
    """A stream_agui token row for a signed-in person (the session belongs to a token),
    issued once the run has passed every check."""
    return tokens.issue_stream_token(user, agent, TOKEN_TYPE).record


def _agent_name(run_input):
    props = run_input.model.forwarded_props
    a2ui = props.get("a2ui") if isinstance(props, dict) else None
    name = a2ui.get("agent") if isinstance(a2ui, dict) else None
    return str(name)[:150] if isinstance(name, str | int) and not isinstance(name, bool) else None


async def _person(request):
    """(bearer StreamToken or None, cookie user or None, refusal or None): who asks, checked
    before the body is read."""
    raw = _bearer(request)
    if raw is not None:
        try:
            return await database_sync_to_async(_verify)(raw), None, None
        except tokens.TokenError as exc:
            return None, None, _refuse(401, exc.reason, code="auth_failed")
    user = await request.auser() if hasattr(request, "auser") else None
    if user is None or not user.is_authenticated:
        return None, None, _refuse(
            401, "Sign in, or send Authorization: Bearer <stream_agui token>.",
            code="auth_failed")
    refused = CsrfViewMiddleware(lambda r: None).process_view(request, None, (), {})
    if refused is not None:
        return None, None, _refuse(403, "CSRF check failed: send the X-CSRFToken header.",
                                   code="csrf_failed")
    return None, user, None


async def _resume_plan(session_id, resume):
    """[(request_id, kind, action)] for the resume entries, checked before the stream."""
    plan = []
    for i, entry in enumerate(resume or []):
        row = await pending.aopen_request(session_id, entry.interrupt_id)
        if row is None:
            raise DomainError(Fault.INVALID_INPUT, "No open interrupt has this id.",
                              {"path": f"resume.{i}.interruptId", "reason": "not open"})
        plan.append((entry.interrupt_id, row.kind, interrupts.answer(row.kind, i, entry)))
    return plan


def _transcript(user, run_input):
    """The run's new user messages with text content, as the session's transcript records
    them (``activity.person_message``: sanitized and bounded, or a DomainError naming the
    message). Content given as parts (images, files) is forwarded to the agent only."""
    records = []
    where = {id(m): i for i, m in enumerate(run_input.model.messages)}
    for message in run_input.new_messages:
        content = getattr(message, "content", None)
        if getattr(message, "role", None) == "user" and isinstance(content, str) and content:
            records.append(activity.person_message(
                user.get_username(), content, None, f"messages.{where[id(message)]}"))
    return records


async def _who(token, user, run_input):
    """(person, agent) of a run or a resumption, within the person's rate of runs: the
    token's, or the cookie's user with the agent the body names (DomainError otherwise)."""
    if token is None:
        agent = await database_sync_to_async(_cookie_agent)(_agent_name(run_input))
    else:
        user, agent = token.user, token.agent
    if await shared.hit_rate_limit(f"agui1:{user.pk}", a2ui_settings.RATE_LIMIT_PER_MINUTE):
        raise DomainError(Fault.RATE_LIMITED, "Too many runs: wait a minute.")
    return user, agent


@csrf_exempt
@json_body_view
async def run_view(request):
    if request.method != "POST":
        return _refuse(405, "Use POST with a RunAgentInput body.", code="method_not_allowed")
    token, user, refused = await _person(request)
    if refused is not None:
        return refused
    try:
        run_input = inputs.parse(limited_body(request, a2ui_settings.MAX_PAYLOAD_SIZE),
                                 a2ui_settings.MAX_PAYLOAD_SIZE,
                                 a2ui_settings.AGUI_MAX_NEW_MESSAGES)
    except inputs.InputError as exc:
        return _input_refused(exc)
    if resume.HEADER in request.headers:
        return await _reattach(request, token, user, run_input)
    # Every check that can be made before anything is stored is made first, so that a refused
    # run leaves no token, session, resumption or audit row behind.
    lease = None  # the person's place among their runs in flight (a2ui.infra.caps)
    try:
        user, agent = await _who(token, user, run_input)
        lease = await caps.acquire_run(user.pk, agent.pk, caps.address_of_request(request))
        found = await threads.afind(user.pk, agent.pk, run_input.thread_id)
        if found is not None:  # a message the session has seen is not new again
            run_input.forget_seen(await runs.aseen_message_ids(found))
        forwards = run_input.new_messages or run_input.model.resume
        missing = await consent.amissing_types(user.pk)
        if missing and forwards:
            raise consent.consent_required_error(missing)
        plan = await _resume_plan(found, run_input.model.resume)
        said = _transcript(user, run_input)
        if found is not None:
            await resume.asupersede(found)  # a run whose client went gives way to this one
            await agui_runs.acheck_free(found, run_input.run_id)
        run = (run_input.run_id, run_input.thread_id, run_input.notice(),
               run_input.candidate_ids())
        # A new session and its first run are one transaction (a resume needs its session).
        token, session, counted = await threads.aopen(
            token, run_input.thread_id, found, run=None if plan else run,
            issue=lambda: _cookie_token(user, agent))
    except DomainError as exc:
        if lease is not None:
            await lease.release()
        return _domain(exc)
    sid = session.session_id
    try:
        if plan and sid != found:  # the session ended meanwhile: its interrupts with it
            raise DomainError(Fault.INVALID_INPUT, "No open interrupt has this id.",
                              {"path": "resume.0.interruptId", "reason": "not open"})
        if sid == found:
            await agui_runs.astart(sid, *run)
        else:  # the new session's first run was stored with it: its lease from now on
            await runleases.aset(sid, run_input.run_id)
    except DomainError as exc:  # lost a race with another run of the thread
        await threads.arelease(sid, counted)
        await lease.release()
        return _domain(exc)
    # The person's words join the session's transcript, for every client: one batch.
    await person.arecord_person_messages(sid, said)
    details = {"run_id": run_input.run_id[:200], "messages": len(run_input.new_messages),
               "resume": len(plan)}
    if run_input.dropped:
        details["dropped"] = run_input.dropped
    await audit.arecord("agui.run", actor=token.user, agent=token.agent, session_id=sid,
                        details=details)
    return handoff.event_stream(stream.run_events(
        frames.Context(session, token, run_input, plan, counted,
                       frozenset(r["message_id"] for r in said)), lease))


async def _reattach(request, token, user, run_input):
    """A client back at a run whose stream broke off (``Last-Event-ID``): the run's events
    after that one (``a2ui.agui1.resume``). The body names the run (``threadId``, ``runId``);
    its messages and ``resume`` were the run's and are not taken again. 404 when this person
    has no such run with the agent."""
    try:
        after = resume.parse_last_event_id(request.headers[resume.HEADER])
    except inputs.InputError as exc:
        return _input_refused(exc)
    try:
        user, agent = await _who(token, user, run_input)
        found = await threads.afind_run(user.pk, agent.pk, run_input.thread_id,
                                        run_input.run_id)
        if found is None:
            return _refuse(404, "No run of this thread has this runId: nothing to resume.",
                           code="not_found", field="runId")
        lease = await caps.acquire_run(user.pk, agent.pk, caps.address_of_request(request))
    except DomainError as exc:
        return _domain(exc)
    sid = found[0]
    await audit.arecord("agui.resume", actor=user, agent=agent, session_id=sid,
                        details={"run_id": run_input.run_id[:200], "after": after})
    return handoff.event_stream(caps.holding(lease, resume.reattach_events(
        sid, agent.pk, run_input.thread_id, run_input.run_id, after,
        token.jti if token is not None else None)))
