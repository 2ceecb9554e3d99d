"""The person's side of /mcp (``stream_mcp`` token): their live UI as resources, and tools
that answer the agent as the web client does; ``show_session`` shows a session as the MCP App
``ui://a2ui/session`` (``a2ui.mcp.sessionapp``), or as A2UI natively to a host that declared
``application/a2ui+json`` (``a2ui.mcp.negotiation.ui_form``).

A token names a person and an agent; the resources are that pair's live sessions (the ones a
web client of theirs opened). Answers go through the same services and checks as the user
socket: the consent gate (-32010 while a required consent is missing), ``answers.aanswer``,
``surfaces.aclient_messages``, and the agent's group for form submissions and cancels.
"""

import json

import mcp_types as types
from django.utils import timezone

from a2ui import surfaces as surface_service
from a2ui.conf import a2ui_settings
from a2ui.consent import choices as consent
from a2ui.core.content import methods
from a2ui.core.errors import DomainError
from a2ui.core.surfaces import translate
from a2ui.core.surfaces.schema import BASIC_CATALOG_ID
from a2ui.infra import groups, shared
from a2ui.mcp import negotiation, render, sessionapp, tools, uris
from a2ui.mcp.refusals import invalid
from a2ui.push import answers, person
from a2ui.requests import pending
from a2ui.rpc.errors import ErrorCode, ProtocolError
from a2ui.sessions import lifecycle as sessions


def _init_capabilities(ctx):
    connection = getattr(ctx.session, "_connection", None)
    return connection.state.get("a2ui_capabilities", {}) if connection is not None else {}


def _call_meta(ctx):
    raw = ctx.params.get("_meta") if isinstance(ctx.params, dict) else None
    return raw if isinstance(raw, dict) else {}


def host_capabilities(ctx):
    """The host's raw capabilities: its ``initialize``'s, or (2026-07-28) this request's."""
    return negotiation.request_capabilities(_init_capabilities(ctx), _call_meta(ctx))


def declared_catalogs(ctx):
    """Catalog ids the host declared (initialize or this call's _meta), or None; a host that
    renders A2UI natively (``application/a2ui+json`` in its MCP Apps ``mimeTypes``) and named
    no catalog is taken to render the basic catalog."""
    capabilities = host_capabilities(ctx)
    caps = negotiation.client_capabilities(capabilities, _call_meta(ctx))
    if caps is not None:
        return surface_service.client_catalog_ids(caps)
    return {BASIC_CATALOG_ID} if negotiation.ui_form(capabilities) == "a2ui" else None


def not_found(uri):
    return ProtocolError(-32002, f"Resource not found: {str(uri)[:200]}", data={"uri": uri})


async def session_or_404(who, session_id, uri):
    try:
        return await surface_service.acheck_stream_session(who.token, session_id)
    except DomainError:
        raise not_found(uri) from None


def templates():
    return [types.ResourceTemplate(uri_template=t, name=name, mime_type=mime, description=desc)
            for t, name, mime, desc in uris.TEMPLATES]


async def _components(session_id):
    return (await sessions.asnapshot(session_id)).components


async def _surfaces(ctx, session_id):
    """The session's surface states the host may see (catalogs it declared)."""
    catalogs = declared_catalogs(ctx)
    if catalogs is None:
        return []
    _, loaded = await surface_service.aload(session_id)
    return [s for s in loaded if s.catalog_id in catalogs and not s.deleted]


async def _views(ctx, session_id):
    """(snapshot, surface states the host may see) of one session."""
    return await sessions.asnapshot(session_id), await _surfaces(ctx, session_id)


ANSWER_TOOL = {"input": "respond", "confirm": "approve"}


def request_resources(session_id, request, apps):
    """The resources of one open request: its JSON, its form, and the MCP App (``apps``)."""
    params = request.get("params") or {}
    rid, kind = params.get("request_id"), request.get("kind")
    name = str((params.get("title") if kind == "confirm" else params.get("prompt")) or rid)
    what = f"{'confirm' if kind == 'confirm' else 'request_input'} {rid}: answer with " \
           f"{ANSWER_TOOL.get(kind, 'respond')}"
    out = [types.Resource(uri=uris.build("requests", session_id, rid), name=name,
                          mime_type=uris.JSON_MIME, description=what),
           types.Resource(uri=uris.build("request_forms", session_id, rid), name=name,
                          mime_type=uris.HTML_MIME, description=what)]
    if apps:
        out.append(types.Resource(uri=uris.build("request_apps", session_id, rid), name=name,
                                  mime_type=uris.APP_MIME, description=what))
    return out


def request_json(session_id, row):
    """What ``a2ui://sessions/<id>/requests/<request_id>`` reads: the open request and how to
    answer it."""
    kind = row.kind
    answer = ({"tool": "approve", "arguments": {"session_id": str(session_id),
                                                "request_id": row.request_id,
                                                "approved": "<boolean>", "reason": "<optional>"}}
              if kind == "confirm" else
              {"tool": "respond", "arguments": {"session_id": str(session_id),
                                                "request_id": row.request_id,
                                                "value": "<the answer>"}})
    return {"session_id": str(session_id), "request_id": row.request_id, "kind": kind,
            "method": pending.METHOD_BY_KIND[kind], "params": row.params, "status": "pending",
            "created_at": row.created_at.isoformat(), "deadline": row.deadline.isoformat(),
            "answer_with": answer}


async def list_resources(ctx, who):
    if who.kind != "person":
        return types.ListResourcesResult(resources=[])
    apps = negotiation.wants_apps(host_capabilities(ctx))
    out = []
    for row in await sessions.aperson_sessions(who.token.user_id, who.token.agent_id):
        sid = row["session_id"]
        out.append(types.Resource(uri=uris.build("client", sid), name=f"session {sid}",
                                  mime_type=uris.URI_LIST_MIME,
                                  description="The web client for this session."))
        snapshot, states = await _views(ctx, sid)
        out.append(types.Resource(uri=uris.build("activity", sid), name=f"activity {sid}",
                                  mime_type=uris.JSON_MIME,
                                  description="The session's transcript, tool calls, state, "
                                              "plans, tree, roster and artifacts."))
        for request in snapshot.requests:
            out.extend(request_resources(sid, request, apps))
        for component in snapshot.components:
            cid, kind = component["component_id"], component["component_type"]
            title = (component.get("data") or {}).get("title") or kind
            out.append(types.Resource(uri=uris.build("components", sid, cid), name=str(title),
                                      mime_type=uris.HTML_MIME, description=f"{kind} {cid}"))
            if apps:
                out.append(types.Resource(uri=uris.build("apps", sid, cid), name=str(title),
                                          mime_type=uris.APP_MIME, description=f"{kind} {cid}"))
        for state in states:
            out.append(types.Resource(uri=uris.build("surfaces", sid, state.surface_id),
                                      name=f"surface {state.surface_id}",
                                      mime_type=uris.A2UI_MIME,
                                      description=f"A2UI v0.9 surface ({state.catalog_id})"))
    return types.ListResourcesResult(resources=out)


def client_url(ctx, session_id):
    from django.urls import reverse

    base = str(ctx.request.base_url).rstrip("/") if ctx.request is not None else ""
    return f"{base}{reverse('a2ui_web:client')}"


async def read_resource(ctx, who, uri):
    if uri == uris.SESSION_APP and who.kind == "person":
        return session_app(ctx)
    ref = uris.parse(uri)
    if ref is None or who.kind != "person":
        raise not_found(uri)
    await session_or_404(who, ref.session_id, uri)
    if ref.kind == "client":
        text = client_url(ctx, ref.session_id) + "\n"
        return types.ReadResourceResult(contents=[types.TextResourceContents(
            uri=uri, mime_type=uris.URI_LIST_MIME, text=text)])
    if ref.kind == "surfaces":
        states = await _surfaces(ctx, ref.session_id)
        state = next((s for s in states if s.surface_id == ref.item), None)
        if state is None:
            raise not_found(uri)
        text = json.dumps(surface_service.snapshot_messages([state]))
        return types.ReadResourceResult(contents=[types.TextResourceContents(
            uri=uri, mime_type=uris.A2UI_MIME, text=text)])
    if ref.kind == "activity":
        text = json.dumps((await sessions.asnapshot(ref.session_id)).activity)
        return types.ReadResourceResult(contents=[types.TextResourceContents(
            uri=uri, mime_type=uris.JSON_MIME, text=text)])
    if ref.kind in ("requests", "request_forms", "request_apps"):
        return await _read_request(ref, uri)
    found = await _components(ref.session_id)
    component = next((c for c in found if c["component_id"] == ref.item), None)
    if component is None:
        raise not_found(uri)
    if ref.kind == "apps":
        meta = render.app_meta(component["component_type"], component.get("data") or {})
        return types.ReadResourceResult(contents=[types.TextResourceContents(
            uri=uri, mime_type=uris.APP_MIME, meta=meta,
            text=render.document(ref.session_id, component, "mcp-app"))])
    return types.ReadResourceResult(contents=[types.TextResourceContents(
        uri=uri, mime_type=uris.HTML_MIME, text=render.document(ref.session_id, component))])


async def _read_request(ref, uri):
    row = await pending.aopen_request(ref.session_id, ref.item)
    if row is None:  # never asked, answered, timed out or cancelled: gone
        raise not_found(uri)
    if ref.kind == "requests":
        return types.ReadResourceResult(contents=[types.TextResourceContents(
            uri=uri, mime_type=uris.JSON_MIME, text=json.dumps(request_json(ref.session_id,
                                                                            row)))])
    request = {"kind": row.kind, "params": row.params}
    if ref.kind == "request_apps":
        return types.ReadResourceResult(contents=[types.TextResourceContents(
            uri=uri, mime_type=uris.APP_MIME, meta=render.app_meta(None, {}),
            text=render.request_document(ref.session_id, request, "mcp-app"))])
    return types.ReadResourceResult(contents=[types.TextResourceContents(
        uri=uri, mime_type=uris.HTML_MIME,
        text=render.request_document(ref.session_id, request))])


def session_app(ctx):
    """``ui://a2ui/session``: the HTML app, or for a host that renders A2UI natively, the A2UI
    content of the template itself (no message: the session's surfaces come with the result
    of ``show_session``)."""
    if negotiation.ui_form(host_capabilities(ctx)) == "a2ui":
        return types.ReadResourceResult(contents=[types.TextResourceContents(
            uri=uris.SESSION_APP, mime_type=uris.A2UI_MIME, text="[]")])
    return types.ReadResourceResult(contents=[types.TextResourceContents(
        uri=uris.SESSION_APP, mime_type=uris.APP_MIME, meta=sessionapp.resource_meta(),
        text=sessionapp.document())])


# Tools -------------------------------------------------------------------------------------------


def _result(value, embedded=None):
    content = [types.TextContent(type="text", text=json.dumps(value))]
    if embedded is not None:
        content.append(embedded)
    return types.CallToolResult(content=content, structured_content=value)


async def call(ctx, who, name, arguments):
    if name == "show_session":
        return await _show(ctx, who, arguments)
    try:
        session_id, rest = tools.split_session(arguments)
    except ValueError as exc:
        raise invalid(str(exc), "is required (a string)") from None
    session = await surface_service.acheck_stream_session(who.token, session_id)
    sid = session.session_id
    if name == "session_view":  # a read, as resources/read: not counted against the answers
        return await _view_result(ctx, sid)
    limit = a2ui_settings.RATE_LIMIT_PER_MINUTE
    if await shared.hit_rate_limit(sid.hex, limit):  # the same window as the person's sockets
        raise ProtocolError(ErrorCode.RATE_LIMITED, data={"limit_per_minute": limit})
    if name == "action":
        message = {"version": "v0.9", "action": {
            "name": rest.get("name"), "surfaceId": rest.get("surfaceId"),
            "sourceComponentId": rest.get("sourceComponentId"),
            "timestamp": timezone.now().isoformat(), "context": rest.get("context", {})}}
        delivered = await person.aclient_messages(sid, [message],
                                                           answers=translate.ANSWERS, via="mcp")
        return _result({"delivered": delivered}, await _surface_embedded(ctx, sid, rest))
    if name == "error":
        message = tools.client_error(rest)
        return _result({"delivered": await person.aclient_messages(sid, [message])})
    if name == "cancel":
        params = methods.validate_params("user.cancel", rest)
        await groups.tell_agent(session.agent_id, "user.cancel",
                                {"session_id": str(sid), **params})
        return _result({"ok": True})
    await consent.arequire_person(who.token.user_id)
    if name == "answer_request":
        return await _answer_request(sid, rest)
    if name == "approve":
        params = methods.validate_params("user.approve", rest)
        value = {"approved": params["approved"], "reason": params.get("reason", "")}
        await answers.aanswer(sid, params["request_id"], "confirm", value, via="mcp")
        return _result({"ok": True})
    params = methods.validate_params("user.respond", rest)
    if not await answers.arespond(sid, params["request_id"], params["value"], via="mcp") \
            and session.agent_id:  # a form component's submission, keyed by its id (as the socket)
        await groups.tell_agent(session.agent_id, "user.respond", {
            "session_id": str(sid), "request_id": params["request_id"],
            "component_id": params["request_id"], "value": params["value"]})
    return _result({"ok": True})


async def _surface_embedded(ctx, sid, rest):
    """The acted-on surface as an EmbeddedResource for the host to render (audience user)."""
    states = await _surfaces(ctx, sid)
    state = next((s for s in states if s.surface_id == rest.get("surfaceId")), None)
    if state is None:
        return None
    return types.EmbeddedResource(
        type="resource", annotations=types.Annotations(audience=["user"]),
        resource=types.TextResourceContents(
            uri=uris.build("surfaces", sid, state.surface_id), mime_type=uris.A2UI_MIME,
            text=json.dumps(surface_service.snapshot_messages([state]))))



# The session app (show_session, session_view, answer_request) ----------------------------------


async def _show(ctx, who, arguments):
    """``show_session``: the named live session, or the person's most recent one."""
    if not isinstance(arguments, dict):
        raise invalid("arguments", "must be an object")
    session_id = arguments.get("session_id")
    if session_id is None:
        live = await sessions.aperson_sessions(who.token.user_id, who.token.agent_id)
        if not live:
            found = {"status": "no_session", "client_url": client_url(ctx, None),
                     "message": "The person has no live session with this agent: it opens "
                                "when they open the web client."}
            return types.CallToolResult(
                content=[types.TextContent(type="text", text=json.dumps(found))],
                structured_content=found, is_error=True)
        session_id = str(live[-1]["session_id"])
    elif not isinstance(session_id, str) or not session_id:
        raise invalid("arguments.session_id", "must be a string")
    session = await surface_service.acheck_stream_session(who.token, session_id)
    return await _view_result(ctx, session.session_id)


async def _view_result(ctx, sid):
    """The session's view (``sessionapp.view``) as a tool result: its summary for the model,
    the view as ``structuredContent`` for the app (its markup for an HTML app host only); a
    host that renders A2UI natively gets the session's surfaces as ``application/a2ui+json``
    resources (audience user)."""
    form = negotiation.ui_form(host_capabilities(ctx))
    native = form == "a2ui"
    snapshot = await sessions.asnapshot(sid)
    found = sessionapp.view(sid, snapshot.components, snapshot.requests,
                            a2ui_settings.MCP_APP_REFRESH_SECONDS, html=form == "html")
    content = [types.TextContent(type="text", text=sessionapp.summary(found))]
    if native:
        shown = [(state.surface_id, surface_service.snapshot_messages([state]))
                 for state in await _surfaces(ctx, sid)]
        if BASIC_CATALOG_ID in (declared_catalogs(ctx) or ()):
            shown += translated_surfaces(snapshot.components, snapshot.requests)
        content += [types.EmbeddedResource(
            type="resource", annotations=types.Annotations(audience=["user"]),
            resource=types.TextResourceContents(
                uri=uris.build("surfaces", sid, surface_id), mime_type=uris.A2UI_MIME,
                text=json.dumps(messages))) for surface_id, messages in shown]
    return types.CallToolResult(content=content, structured_content=found)


def translated_surfaces(components, requests):
    """``(surface id, messages)`` of the session's seed-000 components and open requests as
    basic-catalog surfaces (``a2ui.core.surfaces.translate``, as a v0.9 socket shows them): a
    host that renders A2UI natively sees what every other client sees, and its person's
    actions on them (the ``action`` tool) answer the requests."""
    out = []
    for c in components:
        messages, _ = translate.component_messages(c["component_id"], c["component_type"],
                                                   c.get("data") or {})
        out.append((translate.component_surface_id(c["component_id"]), messages))
    for r in requests:
        messages, _ = translate.request_messages(r["kind"], r["params"])
        out.append((translate.request_surface_id(r["params"]["request_id"]), messages))
    return out


ANSWER_REFUSED = {"answered": "already answered", "timed_out": "timed out",
                  "cancelled": "cancelled"}


async def _answer_request(sid, rest):
    """``answer_request``: ``answer`` once, whatever the repeats (``answers.asettle``). The
    same answer again is replayed (``ok``); a request closed otherwise is a tool error saying
    how; an unknown request is -32602."""
    if "approved" in rest:
        params = methods.validate_params("user.approve", rest)
        kind = "confirm"
        value = {"approved": params["approved"], "reason": params.get("reason", "")}
    elif "value" in rest:
        params = methods.validate_params("user.respond", rest)
        kind, value = "input", params["value"]
    else:
        raise invalid("arguments.value", "is required (value answers a request_input, "
                                         "approved a confirm)")
    rid = params["request_id"]
    row, taken = await answers.asettle(sid, rid, kind, value, via="mcp")
    if taken:
        return _result({"ok": True, "request_id": rid, "status": "answered"})
    if row.status == "answered" and row.answer == value:
        return _result({"ok": True, "request_id": rid, "status": "answered", "replayed": True})
    found = {"ok": False, "request_id": rid, "status": str(row.status),
             "reason": ANSWER_REFUSED.get(str(row.status), str(row.status))}
    return types.CallToolResult(content=[types.TextContent(type="text", text=json.dumps(found))],
                                structured_content=found, is_error=True)
