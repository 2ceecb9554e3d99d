"""What one tab shows in a live test: the ids of the components its socket was sent (JSON-RPC
``ui.render`` or AG-UI ``RENDER_REQUEST``), read in the background until it closes."""

import asyncio
import json

from websockets.exceptions import ConnectionClosed


class Screen:
    def __init__(self, client, name=""):
        self.client, self.name = client, name
        self.ids = set()
        self.task = asyncio.ensure_future(self._read())

    async def _read(self):
        try:
            while True:
                msg = json.loads(await self.client.ws.recv())
                if msg.get("method") == "ui.render":
                    self.ids.add(msg["params"]["component_id"])
                event = msg.get("event") if isinstance(msg.get("event"), dict) else None
                if event and event.get("type") == "RENDER_REQUEST":
                    self.ids.add(event.get("component_id"))
        except ConnectionClosed:
            pass

    async def close(self):
        self.task.cancel()
        await self.client.close()
