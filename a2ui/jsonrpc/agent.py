"""The agent socket, /ws/v4/a2ui/agent with ``Authorization: Bearer <agent key>``.

Agents speak JSON-RPC: the seven ``ui.*`` methods with a ``session_id`` param. Fire-and-forget
methods sent as requests are answered ``{"delivered": true, "seq": n}``. ``ui.request_input``
and ``ui.confirm`` sent as requests are answered with the user's answer, -32004 when their time
runs out, or -32000 when the session closes first; sent as notifications, the answer arrives as
a ``user.respond`` / ``user.approve`` notification. Session events (``session.opened``,
``session.resumed``, ``session.closed``, ``user.cancel``) arrive as notifications: each session's
at one socket of the agent, the one holding it (``a2ui.sessions.agentroute``), unless the socket
was opened with ``?events=all`` (an observer: every event).

``a2ui.pending`` ``{"session_id"?}`` lists what waits for the agent and hands it to this socket
(after a reconnect: answers given while no socket of the agent could take them, and requests
still open, whose answers then come here as notifications). Each answer reaches one socket once.
A socket that connects while such answers wait is first told so: an ``a2ui.pending``
``{"outcomes": n}`` notification.

AG-UI activity: ``agui.event`` ``{"session_id", "event": <seed-003 AG-UI event>}`` pushes
a chat message, tool call, state delta, plan card, resource tree, roster or artifact
(``a2ui.agui.inbound``), answered ``{"delivered": true, "seq": n}`` (docs/agents.md).

A2UI v0.9: ``a2ui.v09`` ``{"session_id", "messages": [...]}`` pushes surface messages (answered
``{"delivered": n, "seq": last}``, or -32602 whose data is the VALIDATION_FAILED message); the
person's actions arrive as ``a2ui.v09`` notifications (see a2ui.surfaces).

AG-UI 1.0 runs: ``agui.run_started`` notifications, ``agui.run_finish`` / ``agui.run_error``
requests (a2ui.agui1.runs, docs/agents.md "Runs").
"""

import asyncio

from django.utils import timezone

from a2ui.consumers.base import NO_RESPONSE, JsonRpcConsumer
from a2ui.core import agentmethods, tracecontext
from a2ui.core.content import idempotency
from a2ui.core.content import methods as wire
from a2ui.core.errors import DomainError
from a2ui.infra import caps, groups, tracing
from a2ui.jsonrpc import liveness
from a2ui.push import answers, outcome, sweep
from a2ui.push import entry as pushentry
from a2ui.requests import pending
from a2ui.rpc import jsonrpc
from a2ui.rpc.errors import REQUEST_CANCELLED, REQUEST_TAKEN_OVER, ErrorCode, ProtocolError
from a2ui.sessions import agentroute, presence
from a2ui.sessions import lifecycle as sessions

#: Requests of one agent socket whose trace context it keeps for the answer's span.
MAX_REQUEST_TRACES = 1000


class A2UIAgentConsumer(JsonRpcConsumer):
    agent = None
    refusal_protocol = "agent"

    async def connect(self):
        auth = self.scope.get("a2ui_auth")
        if auth is not None and auth.unavailable:
            await self.reject(ErrorCode.INTERNAL_ERROR, auth.error)
            return
        if auth is None or auth.agent is None:
            reason = "Agent sockets need Authorization: Bearer <agent key>."
            if auth is not None and auth.agent is None and auth.token is None and auth.error:
                reason = auth.error
            await self.reject(ErrorCode.AUTH_FAILED, reason)
            return
        try:  # ?events=all: an observer that gets every session's events (agentroute)
            self.events = agentroute.mode_from_query(self.scope.get("query_string", b""))
        except DomainError as exc:
            exc = ProtocolError.of(exc)
            await self.reject(exc.code, exc.message)
            return
        try:
            self.cap_lease = await caps.acquire_agent_socket(auth.agent,
                                                             caps.address_of(self.scope))
        except caps.CapReached as exc:
            await self.accept()
            await self.refuse_input(ProtocolError.of(exc))
            await self.close(code=ProtocolError(ErrorCode.RATE_LIMITED).close_code)
            return
        self.agent = auth.agent
        self.timers = {}
        self.request_traces = {}  # (session, request_id) -> the request's traceparent
        group = groups.agent_key_group(self.agent)
        await self.channel_layer.group_add(group, self.channel_name)
        self.groups.append(group)
        # The agent's events come through this process's relay of its group (agentroute).
        listening_since = timezone.now()
        # each session told once, by its notice or the announcement
        self.told_once = sessions.ToldOnce(listening_since.timestamp())
        await agentroute.asubscribe(groups.agent_group(self.agent.id), self.channel_name,
                                    self.events, self.agent_event)
        # The agent's people are told it is online if this is its first socket or listener.
        await presence.ajoin(self.agent.id, self.channel_name)
        await self.accept()
        # ... and offline when it stops answering the server's pings (a frozen agent).
        self.liveness = liveness.Liveness(self.agent.id, self.channel_name, self.send_obj)
        self.liveness.start()
        sweep.ensure_started()
        waiting = await pending.aundelivered_count(self.agent.id)
        if waiting:  # answers given while no socket of the agent could take them
            await self.send_obj(jsonrpc.notification("a2ui.pending", {"outcomes": waiting}))
        # The live sessions no other socket of the agent holds: this one's now (an agent
        # started after its people opened their pages finds them).
        for params in self.told_once.announce(await sessions.aannouncements(
                self.agent.id, self.channel_name, self.events, listening_since)):
            await self.send_obj(jsonrpc.notification("session.resumed", params))

    cap_lease = None  # the agent key's place among its sockets (a2ui.infra.caps)

    liveness = None  # a2ui.jsonrpc.liveness.Liveness once connected

    told_once = None  # a2ui.sessions.lifecycle.ToldOnce once connecting

    async def disconnect(self, code):
        for timer in getattr(self, "timers", {}).values():
            timer.cancel()
        if self.liveness is not None:
            self.liveness.stop()
        try:
            if self.agent is not None:
                await presence.aleave(self.channel_name)
                await agentroute.aunsubscribe(groups.agent_group(self.agent.id),
                                              self.channel_name)
        finally:
            if self.cap_lease is not None:
                await self.cap_lease.release_shielded()

    async def took_response(self, raw):
        """The agent's answer to an ``a2ui.ping`` (a2ui.jsonrpc.liveness)."""
        if self.liveness is None or not liveness.is_answer(raw):
            return False
        if not self.gone:
            await self.liveness.answered()
        return True

    async def handle(self, msg):
        # The agent methods are the adapters' dispatch table (a2ui.core.agentmethods).
        entry = agentmethods.get(msg.method)
        if entry is None or not entry.socket:  # seed 000's -32601, as for any unknown method
            wire.agent_message(msg.method, idempotency.pop(msg.params)[0])
        if msg.method == "a2ui.sessions":
            return {"sessions": await sessions.alive_sessions(self.agent)}
        if msg.method == "a2ui.pending":
            return await self._take_pending(msg.params)
        params, key = idempotency.pop(msg.params)
        meta = None
        if isinstance(params, dict) and "_meta" in params:  # JSON-RPC _meta: trace context
            params = dict(params)
            meta = params.pop("_meta")
        session_id, params = entry.validate(params)
        if not tracing.enabled():
            return await self._deliver(msg, entry, session_id, params, key)
        parent, state = tracecontext.from_meta(meta)
        if parent is None:  # the WebSocket handshake's traceparent header
            parent, state = tracecontext.from_headers(self.scope.get("headers") or ())
        with tracing.span("a2ui.agent.call", parent, state, method=msg.method):
            return await self._deliver(msg, entry, session_id, params, key)

    async def _deliver(self, msg, entry, session_id, params, key=None):
        if entry.awaits:
            if key is not None:
                raise idempotency.for_request(key)
            seq, request = await pushentry.apush(
                self.agent.id, session_id, msg.method, params,
                reply_channel=self.channel_name, rpc_id=msg.id,
            )
            self._arm_timer(request)
            traced = tracing.current()  # None with tracing off
            if traced is not None and len(self.request_traces) < MAX_REQUEST_TRACES:
                self.request_traces[(str(request.session_id), request.request_id)] = traced
            return NO_RESPONSE
        result = await pushentry.apush(self.agent.id, session_id, msg.method, params, key=key)
        if entry.shape == "result":
            return result
        return outcome.answer(result)

    async def _take_pending(self, params):
        if params is None:
            params = {}
        if not isinstance(params, dict):
            raise ProtocolError(ErrorCode.INVALID_PARAMS, "params must be an object",
                                data={"path": "params"})
        items, taken = await answers.apending(self.agent.id, params.get("session_id"),
                                              self.channel_name)
        for request in taken:
            self._arm_timer(request)
        return {"requests": items}

    def _arm_timer(self, request):
        delay = max(0.0, (request.deadline - timezone.now()).total_seconds())
        key = (str(request.session_id), request.request_id)

        async def expire():
            await asyncio.sleep(delay)
            # Firing: no longer a timer to cancel. The outcome reaches this socket (a2ui_answer
            # cancels the timer it finds) while aexpire still tells the person's sockets.
            if self.timers.get(key) is asyncio.current_task():
                del self.timers[key]
            await answers.aexpire(request.session_id, request.request_id)

        old = self.timers.pop(key, None)
        if old is not None:
            old.cancel()
        self.timers[key] = asyncio.get_running_loop().create_task(expire())

    # From the channel layer ------------------------------------------------------------------

    async def a2ui_answer(self, event):
        """The outcome of a request; in an ``a2ui.answer`` span, child of the request's call,
        when it was traced."""
        parent = self.request_traces.pop(
            (event["session_id"], event["request_id"]), None) if self.request_traces else None
        if parent is None:
            await self._answer(event)
            return
        with tracing.span("a2ui.answer", parent, status=event["status"],
                          session=event["session_id"], request=event["request_id"]):
            await self._answer(event)

    async def _answer(self, event):
        # MOVED leaves the timer: the request's new waiter may be this socket (a retry under
        # another JSON-RPC id), armed already; an old socket's timer times it out at the same
        # deadline as the new one's.
        timer = None if event["status"] == pending.MOVED else self.timers.pop(
            (event["session_id"], event["request_id"]), None)
        if timer is not None:
            timer.cancel()
        if self.gone:  # a closed socket takes nothing: the outcome waits for the next one
            return
        rpc_id, status, value = event["rpc_id"], event["status"], event["value"]
        if status == pending.MOVED or not await pending.aclaim(
            event["session_id"], event["request_id"], self.channel_name
        ):
            # Another socket of the agent took the request (or its outcome) over.
            if rpc_id is not None:
                await self.send_error(ProtocolError(
                    REQUEST_TAKEN_OVER, "Request taken over by another agent socket",
                    data={"session_id": event["session_id"], "request_id": event["request_id"]},
                ), rpc_id)
            return
        if rpc_id is None:
            if status == "answered":
                params = {"session_id": event["session_id"], "request_id": event["request_id"]}
                if event["kind"] == "confirm":
                    params.update(value)
                else:
                    params["value"] = value
                await self.send_obj(
                    jsonrpc.notification(pending.ANSWER_METHOD[event["kind"]], params)
                )
            else:
                params = {"session_id": event["session_id"], "request_id": event["request_id"],
                          "status": status, "method": pending.METHOD_BY_KIND.get(event["kind"])}
                if status == "cancelled":
                    params["cancelled_by"] = pending.cancelled_by(value)
                await self.send_obj(jsonrpc.notification("request.closed", params))
            return
        if status == "answered":
            await self.send_obj(jsonrpc.result(rpc_id, value))
        elif status == "timed_out":
            data = {"request_id": event["request_id"]}
            if event["kind"] == "confirm":
                data["approved"] = False
            await self.send_error(ProtocolError(ErrorCode.REQUEST_TIMEOUT, data=data), rpc_id)
        elif pending.cancelled_by(value) == "person":  # the session goes on
            await self.send_error(ProtocolError(
                REQUEST_CANCELLED, "Request cancelled",
                data={"session_id": event["session_id"], "request_id": event["request_id"],
                      "cancelled_by": "person"}), rpc_id)
        else:
            await self.send_error(
                ProtocolError(
                    ErrorCode.SESSION_NOT_FOUND, "Session closed before the user answered",
                    data={"session_id": event["session_id"]},
                ),
                rpc_id,
            )

    async def agent_event(self, event):
        """A session event this socket gets (handed over by ``agentroute``'s relay)."""
        if self.told_once and not self.told_once.relayed(event):
            return  # the session was announced to this socket as it connected
        await self.send_obj(jsonrpc.notification(event["method"], event["params"]))

    async def a2ui_close(self, event):
        await self.close(code=event["code"], reason=event.get("reason", "")[:120])
