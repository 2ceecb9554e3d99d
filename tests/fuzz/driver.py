"""Drives one in-process socket through hostile frames, one case at a time.

After each hostile frame a probe (a valid request with a fresh id) is sent; everything the
server sends until the probe's answer belongs to the hostile frame. The probe's answer proves
the socket still answers, without a single timed wait.
"""

from __future__ import annotations

import itertools
import json

from channels.testing import WebsocketCommunicator

from a2ui_project.asgi import application
from tests.fuzz import harness

PROBE_TIMEOUT = 15  # seconds; only reached when the socket is dead or wedged


class SocketDied(Exception):
    pass


class Driver:
    """One socket under fuzz. ``protocol`` is "jsonrpc", "v09" or "agui" (seed 003)."""

    def __init__(self, path, *, headers=(), protocol="jsonrpc", probe=None, sessions=(),
                 error_log, failures, setup=None):
        self.path, self.headers, self.protocol = path, list(headers), protocol
        self.probe_body = probe
        self.sessions = list(sessions)
        self.error_log, self.failures = error_log, failures
        self.setup = setup  # async callable(driver) run on every (re)connect
        self.comm = None
        self._ids = itertools.count()
        self.extra = []  # frames the server sent that were not replies (pushes, events)
        self.baseline = None  # stored state after the previous case (nothing runs in between)

    async def connect(self):
        self.comm = WebsocketCommunicator(application, self.path, headers=self.headers)
        connected, _ = await self.comm.connect(timeout=PROBE_TIMEOUT)
        assert connected, f"could not connect to {self.path}"
        if self.setup is not None:
            await self.setup(self)
        self.baseline = None

    async def close(self):
        if self.comm is not None:
            try:
                await self.comm.disconnect(timeout=PROBE_TIMEOUT)
            except Exception:  # noqa: BLE001 - a crashed consumer was already reported
                pass
            self.comm = None

    async def send_frame(self, frame):
        if frame.data is not None:
            await self.comm.send_input({"type": "websocket.receive", "bytes": frame.data})
        else:
            await self.comm.send_input({"type": "websocket.receive", "text": frame.text})

    async def receive(self):
        """One output; a crash or close raises SocketDied with what happened."""
        try:
            message = await self.comm.receive_output(timeout=PROBE_TIMEOUT)
        except TimeoutError:
            raise SocketDied("no answer to the probe: the socket is wedged") from None
        except Exception as exc:  # the consumer raised: Daphne would close 1011
            raise SocketDied(f"consumer crashed: {type(exc).__name__}: {exc}"[:300]) from None
        if message["type"] == "websocket.close":
            problems = []
            harness.check_close(message.get("code"), problems, allowed=None)
            raise SocketDied(f"socket closed with {message.get('code')!r}"
                             + (f" ({'; '.join(problems)})" if problems else ""))
        return message

    def probe_message(self):
        probe_id = f"probe-{next(self._ids)}"
        if self.protocol == "jsonrpc":
            return probe_id, {"jsonrpc": "2.0", "id": probe_id, **self.probe_body}
        if self.protocol == "agui":
            # A major version of its own: the INVALID_VERSION error names it.
            probe_id = f"9.{next(self._ids)}.0"
            return probe_id, {"version": probe_id, "id": "00000000-0000-4000-8000-000000000000",
                              "timestamp": "2026-01-01T00:00:00Z",
                              "event": {"type": "TEXT_MESSAGE", "sender": "u", "content": "x"}}
        # v0.9: an action on a surface named after the probe; its refusal names the surface.
        return probe_id, {"version": "v0.9", "action": {
            "name": "probe", "surfaceId": probe_id, "sourceComponentId": "x",
            "timestamp": "2026-01-01T00:00:00Z", "context": {}}}

    def _is_probe_reply(self, obj, probe_id):
        if self.protocol == "jsonrpc":
            return isinstance(obj, dict) and obj.get("id") == probe_id and "method" not in obj
        if self.protocol == "agui":
            event = obj.get("event") if isinstance(obj, dict) else None
            return (isinstance(event, dict) and event.get("code") == "INVALID_VERSION"
                    and f"Version {probe_id} " in str(event.get("message")))
        error = obj.get("error") if isinstance(obj, dict) else None
        return isinstance(error, dict) and error.get("surfaceId") == probe_id

    async def probe(self, problems):
        """Send the probe; return the checked objects the server sent before its answer."""
        probe_id, body = self.probe_message()
        await self.comm.send_input({"type": "websocket.receive", "text": json.dumps(body)})
        before = []
        while True:
            message = await self.receive()
            text = message.get("text")
            if text is None:
                problems.append(f"binary frame from the server: {message.get('bytes')!r:.80}")
                continue
            obj = harness.check_text(text, problems)
            if obj is None:
                continue
            if self._is_probe_reply(obj, probe_id):
                if self.protocol == "jsonrpc" and "result" not in obj:
                    problems.append(f"the probe was refused: {text[:200]}")
                return before
            before.append(obj)

    def refused(self, objs, problems):
        check = {"jsonrpc": harness.check_rpc_error, "agui": harness.check_agui_error}.get(
            self.protocol, harness.check_v09_error)
        refused = False
        for obj in objs:
            if check(obj, problems):
                refused = True
            else:
                self.extra.append(obj)
        return refused

    async def case(self, frame, *, track_state=True):
        """Send one hostile frame and check everything; reconnect if the socket died."""
        problems = []
        mark = len(self.error_log.records)
        if track_state and self.baseline is None:
            self.baseline = await harness.snapshot(self.sessions)
        before = self.baseline
        try:
            await self.send_frame(frame)
            replies = await self.probe(problems)
        except SocketDied as exc:
            problems.append(str(exc))
            replies = None
        if track_state:
            self.baseline = after = await harness.snapshot(self.sessions)
            problems += [f"stored what no client can draw: {x}" for x in harness.undrawable(after)]
            if replies is not None and self.refused(replies, problems):
                changed = harness.diff(before, after)
                if changed:
                    problems.append(f"refused, yet changed stored state: {changed}")
        elif replies is not None:
            self.refused(replies, problems)
        problems += [f"logged: {line}" for line in self.error_log.since(mark)]
        self.failures.add(frame, problems)
        if replies is None:
            await self.close()
            await self.connect()
        return replies
