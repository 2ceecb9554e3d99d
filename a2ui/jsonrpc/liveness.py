"""Whether the agent behind an agent socket answers: a process can be alive, its socket open,
and the agent frozen (a blocked event loop, a stopped process). Its people would be told
"Assistant connected" until TCP gives up, minutes later.

The server sends each agent socket an ``a2ui.ping`` request (``{"jsonrpc": "2.0", "id":
"a2ui-ping-<n>", "method": "a2ui.ping", "params": {}}``) every ``A2UI['AGENT_PING_SECONDS']``.
Any JSON-RPC response with that id (a result, or even an error such as -32601 from an agent
that knows no such method) is an answer. A socket that answered none for
``A2UI['AGENT_PING_TIMEOUT_SECONDS']`` leaves the agent's presence (``a2ui.sessions.presence``:
when it was the agent's last member, its people see it offline); its next answer joins it
again. With the defaults (4 s, 8 s) a frozen agent shows as offline within 12 s.
``a2ui.sdk.AgentClient`` answers by itself.
"""

import asyncio
import itertools
import logging
import time

from a2ui.conf import a2ui_settings
from a2ui.rpc import jsonrpc
from a2ui.sessions import presence

log = logging.getLogger(__name__)

METHOD = "a2ui.ping"
ID_PREFIX = "a2ui-ping-"


def is_answer(raw):
    """True when ``raw`` (a frame the agent sent) is a response to one of our pings. Only
    called for frames that are not requests (their parse failed), so it costs nothing on the
    per-message path."""
    if not raw or len(raw) > 4096:
        return False
    try:
        response = jsonrpc.parse_response(raw, max_size=4096)
    except Exception:
        return False
    return isinstance(response.id, str) and response.id.startswith(ID_PREFIX)


class Liveness:
    """One agent socket's pings. ``send(obj)`` sends a JSON-RPC object on the socket."""

    def __init__(self, agent_id, member, send, clock=time.monotonic):
        self.agent_id = str(agent_id)
        self.member = member
        self.send = send
        self.clock = clock
        self.ids = itertools.count(1)
        self.last_answer = clock()
        self.responsive = True
        self.task = None

    def start(self):
        interval = a2ui_settings.AGENT_PING_SECONDS
        if interval and interval > 0:
            self.task = asyncio.get_running_loop().create_task(self._run(interval))

    def stop(self):
        if self.task is not None:
            self.task.cancel()
            self.task = None

    async def _run(self, interval):
        window = a2ui_settings.AGENT_PING_TIMEOUT_SECONDS
        while True:
            await asyncio.sleep(interval)
            try:
                if self.responsive and self.clock() - self.last_answer >= window:
                    self.responsive = False
                    log.info("a2ui: agent %s answered no ping for %.0f s: offline", self.agent_id,
                             self.clock() - self.last_answer)
                    await presence.aleave(self.member)
                await self.send(jsonrpc.request(f"{ID_PREFIX}{next(self.ids)}", METHOD))
            except asyncio.CancelledError:
                raise
            except Exception:  # the socket closing, Redis away: the next beat tries again
                log.debug("a2ui: agent ping failed", exc_info=True)

    async def answered(self):
        """An answer arrived: the agent is there (again)."""
        self.last_answer = self.clock()
        if not self.responsive:
            self.responsive = True
            log.info("a2ui: agent %s answers again: online", self.agent_id)
            await presence.ajoin(self.agent_id, self.member)
